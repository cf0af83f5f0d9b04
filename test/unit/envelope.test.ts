import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decryptEnvelope, encryptEnvelope } from '../../src/ciphers/envelope';
import { encryptForMerchant } from '../helpers/merchant-client';

const key = 'k'.repeat(32);
const otherKey = 'z'.repeat(32);

describe('request envelope (AES-256-CBC)', () => {
  it('round-trips text, including non-ASCII', () => {
    const text = '{"first_name":"Zoë","amount":1.000000000000000001}';
    expect(decryptEnvelope(encryptEnvelope(text, key), key)).toBe(text);
  });

  it('reads what a merchant encrypts by the interface, independently of our encoder', () => {
    const payload = encryptForMerchant({ a: 1 }, key);
    expect(payload).toMatch(/^[0-9a-f]{32}:[0-9a-f]+$/);
    expect(decryptEnvelope(payload, key)).toBe('{"a":1}');
  });

  it('uses a fresh IV every time', () => {
    expect(encryptEnvelope('x', key).split(':')[0]).not.toBe(encryptEnvelope('x', key).split(':')[0]);
  });

  const valid = encryptEnvelope('{"a":1}', key);
  const [iv, data] = valid.split(':') as [string, string];
  const flipLastByte = `${iv}:${data.slice(0, -2)}${((parseInt(data.slice(-2), 16) ^ 0xff) & 0xff).toString(16).padStart(2, '0')}`;

  it.each([
    ['a wrong key', valid, otherKey],
    ['no colon', `${iv}${data}`, key],
    ['two colons', `${iv}:${data}:00`, key],
    ['a short IV', `${iv.slice(2)}:${data}`, key],
    ['a long IV', `${iv}00:${data}`, key],
    ['odd-length hex', `${iv}:${data}0`, key],
    ['non-hex characters', `${iv}:${data.slice(0, -2)}zz`, key],
    ['ciphertext not a multiple of 16 bytes', `${iv}:${data}00`, key],
    ['empty ciphertext', `${iv}:`, key],
    ['bad padding', flipLastByte, key],
    ['a key that is not 32 bytes', valid, 'short'],
  ])('refuses %s', (_case, payload, withKey) => {
    expect(decryptEnvelope(payload, withKey)).toBeUndefined();
  });

  it('refuses plaintext that is not UTF-8', () => {
    const iv = randomBytes(16);
    const cipher = createCipheriv('aes-256-cbc', Buffer.from(key, 'utf8'), iv);
    const data = Buffer.concat([cipher.update(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), cipher.final()]);
    expect(decryptEnvelope(`${iv.toString('hex')}:${data.toString('hex')}`, key)).toBeUndefined();
  });
});
