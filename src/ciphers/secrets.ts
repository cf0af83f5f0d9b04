import { createHmac } from 'node:crypto';
import { open, seal } from './payload-codec';

/** Encrypts a merchant secret with the master key: base64 of iv|ciphertext|tag. */
export function encryptSecret(plain: string, masterKeyHex: string): string {
  return Buffer.from(seal(Buffer.from(plain, 'utf8'), Buffer.from(masterKeyHex, 'hex'))).toString('base64');
}

export function decryptSecret(sealed: string, masterKeyHex: string): string {
  return Buffer.from(open(Buffer.from(sealed, 'base64'), Buffer.from(masterKeyHex, 'hex'))).toString('utf8');
}

/**
 * Each purpose's key, derived from the master key once per process rather than on every digest (the
 * lists' cursors take two digests a page). Keyed by both: a key rotation derives anew. Purposes are a
 * fixed few and master keys one or two, so the map stays small; it is emptied should that ever not hold.
 * The module's one piece of state: a memo of a pure function, which changes no digest.
 */
const purposeKeys = new Map<string, Buffer>();

/** Keyed digest for values we must compare but never store in clear (card fingerprints, request hashes). */
export function keyedDigest(value: string, masterKeyHex: string, purpose: string): string {
  const name = `${purpose}\u0000${masterKeyHex}`;
  let key = purposeKeys.get(name);
  if (!key) {
    if (purposeKeys.size >= 64) purposeKeys.clear();
    key = createHmac('sha256', Buffer.from(masterKeyHex, 'hex')).update(purpose).digest();
    purposeKeys.set(name, key);
  }
  return createHmac('sha256', key).update(value, 'utf8').digest('hex');
}
