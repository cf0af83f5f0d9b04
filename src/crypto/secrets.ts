import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { open, seal } from './payload-codec';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const URL_SAFE = `${BASE62}-_`;
const PRINTABLE = `${BASE62}!#$%&()*+,-./:;<=>?@[]^_{|}~`;

export function randomString(length: number, alphabet: string = BASE62): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

export type Mode = 'test' | 'live';

export function newSecretKey(mode: Mode): string {
  return `${mode === 'test' ? 'PA_TEST_' : 'PA_LIVE_'}${randomString(40)}`;
}

export function modeOfSecretKey(key: string): Mode | undefined {
  if (key.startsWith('PA_TEST_')) return 'test';
  if (key.startsWith('PA_LIVE_')) return 'live';
  return undefined;
}

/** 32 printable characters: used as the AES-256 key of the request envelope as its UTF-8 bytes. */
export function newEncryptionKey(): string {
  return randomString(32, PRINTABLE);
}

/** `PA` + 24 URL-safe characters: 144 random bits. Also the Temporal workflow id. */
export function newTransactionId(): string {
  return `PA${randomString(24, URL_SAFE)}`;
}

export function newId(prefix: string): string {
  return `${prefix}_${randomString(20)}`;
}

/** Secret keys carry 238 random bits, so a plain SHA-256 is a safe lookup hash. */
export function hashSecretKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function constantTimeEqualHex(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

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

export function newHexKey(): string {
  return randomBytes(32).toString('hex');
}
