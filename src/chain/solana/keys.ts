import { createHmac } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import type { ChainNode } from '../nodes';

const HARDENED = 0x80000000;

/**
 * SLIP-0010 derivation for ed25519, the scheme Solana wallets use: every step hardened, the private key
 * and chain code the two halves of an HMAC-SHA512.
 */
export function slip10Ed25519(seed: Uint8Array, path: readonly number[]): Uint8Array {
  let digest = createHmac('sha512', 'ed25519 seed').update(seed).digest();
  for (const index of path) {
    if (!Number.isSafeInteger(index) || index < 0 || index >= HARDENED) {
      throw new Error(`path index ${index} is outside 0..${HARDENED - 1}`);
    }
    const data = Buffer.alloc(37);
    digest.copy(data, 1, 0, 32);
    data.writeUInt32BE(index + HARDENED, 33);
    digest = createHmac('sha512', digest.subarray(32)).update(data).digest();
  }
  return new Uint8Array(digest.subarray(0, 32));
}

/** Whether `text` is a Solana address: base58 of 32 bytes. */
export function isSolanaAddress(text: string): boolean {
  try {
    return base58.decode(text).length === 32;
  } catch {
    return false;
  }
}

/**
 * The keys of one watched Solana node, from its HD seed (SLIP-0010, Solana's coin type 501): the treasury
 * at m/44'/501'/0'/0', which pays every send's fee and makes on-ramp sends from its own token accounts, and
 * deposit owner `i` at m/44'/501'/1'/i', whose associated token account customers pay and refunds leave
 * from. Addresses are base58, case-sensitive, stored as they are.
 */
export class SolanaKeys {
  private readonly seed: Uint8Array;

  constructor(seedHex: string) {
    this.seed = Buffer.from(seedHex, 'hex');
  }

  treasuryKey(): Uint8Array {
    return slip10Ed25519(this.seed, [44, 501, 0, 0]);
  }

  treasuryAddress(): string {
    return base58.encode(ed25519.getPublicKey(this.treasuryKey()));
  }

  depositKey(index: number): Uint8Array {
    return slip10Ed25519(this.seed, [44, 501, 1, index]);
  }

  depositAddress(index: number): string {
    return base58.encode(ed25519.getPublicKey(this.depositKey(index)));
  }
}

const opened = new WeakMap<ChainNode, SolanaKeys>();

/** A Solana node's keys, derived once per opened node. */
export function solanaKeys(node: ChainNode): SolanaKeys {
  let keys = opened.get(node);
  if (!keys) {
    keys = new SolanaKeys(node.seedHex);
    opened.set(node, keys);
  }
  return keys;
}
