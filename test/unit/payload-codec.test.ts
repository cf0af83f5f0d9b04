import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { AesGcmPayloadCodec, ENCODING, parsePayloadKeys } from '../../src/ciphers/payload-codec';

const k1 = { id: 'k1', key: randomBytes(32) };
const k2 = { id: 'k2', key: randomBytes(32) };
const payload = defaultPayloadConverter.toPayload({ card: { last4: '4242' }, amount: '1050' });

describe('Temporal payload codec (AES-256-GCM)', () => {
  it('round-trips a payload and hides its content', async () => {
    const codec = new AesGcmPayloadCodec([k1]);
    const [encoded] = await codec.encode([payload]);
    expect(new TextDecoder().decode(encoded!.metadata!.encoding)).toBe(ENCODING);
    expect(Buffer.from(encoded!.data!).toString('latin1')).not.toContain('4242');
    const [decoded] = await codec.decode([encoded!]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({
      card: { last4: '4242' },
      amount: '1050',
    });
  });

  it('decodes payloads written under an older key after a rotation', async () => {
    const [old] = await new AesGcmPayloadCodec([k1]).encode([payload]);
    const rotated = new AesGcmPayloadCodec([k2, k1]);
    const [decoded] = await rotated.decode([old!]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({
      card: { last4: '4242' },
      amount: '1050',
    });
    const [fresh] = await rotated.encode([payload]);
    expect(new TextDecoder().decode(fresh!.metadata!['encryption-key-id'])).toBe('k2');
  });

  it('refuses a payload under an unknown key id', async () => {
    const [encoded] = await new AesGcmPayloadCodec([k1]).encode([payload]);
    await expect(new AesGcmPayloadCodec([k2]).decode([encoded!])).rejects.toThrow(/unknown key id/);
  });

  it('refuses a payload whose tag or body was tampered with', async () => {
    const codec = new AesGcmPayloadCodec([k1]);
    const [encoded] = await codec.encode([payload]);
    for (const index of [0, 14, encoded!.data!.length - 1]) {
      const data = Uint8Array.from(encoded!.data!);
      data[index]! ^= 0x01;
      await expect(codec.decode([{ ...encoded!, data }])).rejects.toThrow();
    }
  });

  it('refuses a truncated payload', async () => {
    const codec = new AesGcmPayloadCodec([k1]);
    const [encoded] = await codec.encode([payload]);
    await expect(codec.decode([{ ...encoded!, data: encoded!.data!.slice(0, 10) }])).rejects.toThrow(
      /too short/,
    );
  });

  it('passes through payloads it did not encode', async () => {
    const [decoded] = await new AesGcmPayloadCodec([k1]).decode([payload]);
    expect(decoded).toBe(payload);
  });

  it('parses key lists and rejects malformed ones', () => {
    expect(parsePayloadKeys(`a:${'0'.repeat(64)},b:${'1'.repeat(64)}`).map((k) => k.id)).toEqual(['a', 'b']);
    expect(() => parsePayloadKeys('a:123')).toThrow();
  });
});
