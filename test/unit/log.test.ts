import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loggerOptions } from '../../src/platform/log';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: pino(loggerOptions('info'), stream), lines };
}

describe('log redaction', () => {
  it('censors credentials, payloads and card data wherever they sit', () => {
    const { log, lines } = capture();
    log.info(
      {
        req: { headers: { authorization: 'Bearer PA_TEST_secret' } },
        payload: 'aabb:ccdd',
        card_number: '4111111111111111',
        request: { card_number: '4111111111111111', card_cvv: '123', encryption_key: 'k'.repeat(32) },
      },
      'request',
    );
    const text = lines.join('');
    for (const secret of ['PA_TEST_secret', 'aabb:ccdd', '4111111111111111', '"123"', 'k'.repeat(32)]) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('[redacted]');
  });
});
