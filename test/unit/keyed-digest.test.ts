/**
 * keyedDigest keeps each purpose's derived key per master key: the digests must stay what the two-step
 * definition gives, for every key and purpose, including after another key was used in between.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyedDigest } from '../../src/ciphers/secrets';

/** The definition, derived afresh each time. */
function expected(value: string, masterKeyHex: string, purpose: string): string {
  const key = createHmac('sha256', Buffer.from(masterKeyHex, 'hex')).update(purpose).digest();
  return createHmac('sha256', key).update(value, 'utf8').digest('hex');
}

describe('keyedDigest', () => {
  it('answers the definition for each master key and purpose, in any order', () => {
    const keys = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
    const purposes = ['card-fingerprint', 'request-hash', 'list-cursor'];
    for (let round = 0; round < 3; round++) {
      for (const key of keys) {
        for (const purpose of purposes) {
          expect(keyedDigest(`value ${round}`, key, purpose)).toBe(expected(`value ${round}`, key, purpose));
        }
      }
    }
    expect(keyedDigest('same', keys[0]!, 'request-hash')).not.toBe(
      keyedDigest('same', keys[1]!, 'request-hash'),
    );
    expect(keyedDigest('same', keys[0]!, 'request-hash')).not.toBe(
      keyedDigest('same', keys[0]!, 'list-cursor'),
    );
  });

  it('stays right when more keys come than it keeps', () => {
    for (let i = 0; i < 100; i++) {
      const key = randomBytes(32).toString('hex');
      expect(keyedDigest('v', key, 'p')).toBe(expected('v', key, 'p'));
    }
  });
});
