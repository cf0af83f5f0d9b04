import { randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const URL_SAFE = `${BASE62}-_`;
/**
 * Printable characters a shell passes through as typed, quoted or not (no `$`, quotes, `!`, `<`, spaces,
 * and no leading `-` to read as an option): for keys a reader pastes into a command. 70 of them.
 */
export const SHELL_SAFE = `${BASE62}_.:+=@%,`;

/** Characters drawn uniformly from `alphabet` by the CSPRNG. */
export function randomString(length: number, alphabet: string = BASE62): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** `PA` + 24 URL-safe characters: 144 random bits. Also the Temporal workflow id. */
export function newTransactionId(): string {
  return `PA${randomString(24, URL_SAFE)}`;
}

/** `prefix_` + 20 base62 characters (merchants, wallets, terminals, webhook events...). */
export function newId(prefix: string): string {
  return `${prefix}_${randomString(20)}`;
}
