import { createHash } from 'node:crypto';
import { createBase58check } from '@scure/base';
import { bytesToHex, hexToBytes } from 'viem';
import type { EvmAddressing } from '../evm/addresses';

/**
 * TRON's address form: base58check of 0x41 and the account's 20 bytes (`T…`, 34 characters). Its JSON-RPC
 * and its logs carry the same 20 bytes as Ethereum's hex, so the service watches in hex and shows a
 * merchant or customer the T-address.
 */
const base58check = createBase58check((data: Uint8Array) => createHash('sha256').update(data).digest());
const TRON_PREFIX = 0x41;

/** `0x` + 40 hex digits to the T-address of the same account. */
export function toTronAddress(hex: string): string {
  const bytes = hexToBytes(hex as `0x${string}`);
  if (bytes.length !== 20) throw new Error(`${hex} is not a 20-byte address`);
  return base58check.encode(Uint8Array.of(TRON_PREFIX, ...bytes));
}

/** A T-address (or `0x` hex) to lower-case hex; undefined when it is neither. */
export function fromTronAddress(address: string): `0x${string}` | undefined {
  if (/^0x[0-9a-fA-F]{40}$/.test(address)) return address.toLowerCase() as `0x${string}`;
  try {
    const bytes = base58check.decode(address);
    if (bytes.length !== 21 || bytes[0] !== TRON_PREFIX) return undefined;
    return bytesToHex(bytes.slice(1));
  } catch {
    return undefined;
  }
}

/** TRON's addressing: T-addresses shown, the same 20 bytes in hex stored, keys at coin type 195. */
export const tronAddressing: EvmAddressing = {
  coinType: 195,
  shown: toTronAddress,
  stored: fromTronAddress,
  prefix: 'T',
};
