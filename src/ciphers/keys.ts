import { createHash } from 'node:crypto';
import type { Mode } from '../lib/vocabulary';
import { SHELL_SAFE, randomString } from './ids';

/** `PA_TEST_` or `PA_LIVE_` + 40 base62 characters (238 random bits). */
export function newSecretKey(mode: Mode): string {
  return `${mode === 'test' ? 'PA_TEST_' : 'PA_LIVE_'}${randomString(40)}`;
}

/**
 * 32 printable characters (196 random bits), used as the AES-256 key of the request envelope as its UTF-8
 * bytes; drawn from characters a shell leaves alone, so the key pastes into a command as printed.
 */
export function newEncryptionKey(): string {
  return randomString(32, SHELL_SAFE);
}

/** Secret keys carry 238 random bits, so a plain SHA-256 is a safe lookup hash. */
export function hashSecretKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
