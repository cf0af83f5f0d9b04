import { createHmac } from 'node:crypto';
import { open, seal } from './payload-codec';

/** Encrypts a merchant secret with the master key: base64 of iv|ciphertext|tag. */
export function encryptSecret(plain: string, masterKeyHex: string): string {
  return Buffer.from(seal(Buffer.from(plain, 'utf8'), Buffer.from(masterKeyHex, 'hex'))).toString('base64');
}

export function decryptSecret(sealed: string, masterKeyHex: string): string {
  return Buffer.from(open(Buffer.from(sealed, 'base64'), Buffer.from(masterKeyHex, 'hex'))).toString('utf8');
}

/** Keyed digest for values we must compare but never store in clear (card fingerprints, request hashes). */
export function keyedDigest(value: string, masterKeyHex: string, purpose: string): string {
  const key = createHmac('sha256', Buffer.from(masterKeyHex, 'hex')).update(purpose).digest();
  return createHmac('sha256', key).update(value, 'utf8').digest('hex');
}
