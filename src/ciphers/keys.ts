import { createHash } from 'node:crypto';
import type { Mode } from '../lib/vocabulary';
import { PRINTABLE, randomString } from './ids';

/** `PA_TEST_` or `PA_LIVE_` + 40 base62 characters (238 random bits). */
export function newSecretKey(mode: Mode): string {
  return `${mode === 'test' ? 'PA_TEST_' : 'PA_LIVE_'}${randomString(40)}`;
}

/** 32 printable characters: used as the AES-256 key of the request envelope as its UTF-8 bytes. */
export function newEncryptionKey(): string {
  return randomString(32, PRINTABLE);
}

/** Secret keys carry 238 random bits, so a plain SHA-256 is a safe lookup hash. */
export function hashSecretKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
