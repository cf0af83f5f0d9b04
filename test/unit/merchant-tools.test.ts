import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/index';
import { decryptEnvelope } from '../../src/ciphers/envelope';
import { webhookHeaders } from '../../src/webhooks/signing';

/** `npx payments encrypt | decrypt | webhooks verify`, run with no configuration at all. */
async function payments(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((c) => ((stdout += String(c)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((c) => ((stderr += String(c)), true));
  try {
    return { code: await runCli(argv, {}), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

const KEY = 'k'.repeat(16) + '0123456789abcdef';

describe('merchant tools', () => {
  it('encrypts a body the service decrypts, and decrypts it back from the body or the payload', async () => {
    const fields = { amount: 1050, currency: 'USD', first_name: 'Jane' };
    const encrypted = await payments('encrypt', '--key', KEY, '--data', JSON.stringify(fields));
    expect(encrypted.code, encrypted.stderr).toBe(0);
    const body = JSON.parse(encrypted.stdout) as { payload: string };
    expect(JSON.parse(decryptEnvelope(body.payload, KEY)!)).toEqual(fields);
    for (const given of [encrypted.stdout, body.payload]) {
      const decrypted = await payments('decrypt', '--key', KEY, '--data', given);
      expect(decrypted.code, decrypted.stderr).toBe(0);
      expect(JSON.parse(decrypted.stdout)).toEqual(fields);
    }
  });

  it('refuses a wrong key, a wrong-length key and a body that is not JSON, saying so', async () => {
    const body = (await payments('encrypt', '--key', KEY, '--data', '{"a":1}')).stdout;
    const wrong = await payments('decrypt', '--key', 'x'.repeat(32), '--data', body);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('Encryption Key is invalid.');
    expect((await payments('encrypt', '--key', 'short', '--data', '{}')).stderr).toContain(
      '--key must be 32 bytes',
    );
    expect((await payments('encrypt', '--key', KEY, '--data', 'amount=5')).stderr).toContain('JSON object');
    expect((await payments('encrypt', '--key', KEY, '--data', '[1]')).stderr).toContain('JSON object');
  });

  it('verifies a webhook as sent, and refuses a changed body, another secret and an old delivery', async () => {
    const body = '{"status":"SUCCESS","event_id":"evt_1"}';
    const now = Math.floor(Date.now() / 1000);
    const sent = webhookHeaders(body, 'whsec_test', 'evt_1', now);
    const verify = (data: string, secret = 'whsec_test', timestamp = now) =>
      payments(
        ...['webhooks', 'verify', '--secret', secret, '--id', 'evt_1', '--timestamp', String(timestamp)],
        ...['--signature', sent['webhook-signature'], '--hash', sent['fs-webhook-hash'], '--data', data],
      );
    const good = await verify(body);
    expect(good.code, good.stderr).toBe(0);
    expect(JSON.parse(good.stdout)).toEqual({ valid: true, signature: true, hash: true, fresh: true });
    const changed = await verify(body.replace('SUCCESS', 'FAILED'));
    expect(changed.code).toBe(1);
    expect(JSON.parse(changed.stdout)).toMatchObject({ valid: false, signature: false, hash: false });
    expect(JSON.parse((await verify(body, 'whsec_other')).stdout).valid).toBe(false);
    const replayed = await verify(body, 'whsec_test', now - 3600);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ valid: false, fresh: false, signature: false });
  });
});
