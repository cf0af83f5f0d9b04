import { HDKey } from '@scure/bip32';
import { bytesToHex, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { ChainNode } from '../nodes';

/** BIP-32 indexes below this are unhardened; one seed gives this many deposit addresses. */
const MAX_INDEX = 2 ** 31 - 1;

/**
 * The keys of one node of the EVM family or TRON's, from its HD seed (BIP-44 paths, coin type 60, or
 * TRON's 195): the treasury that sends and refunds at m/44'/C'/0'/0/0, deposit address `i` at
 * m/44'/C'/1'/0/i. Deposit addresses are never spent from here; their funds stay until swept
 * (docs/connectors.md). Addresses are the 20 bytes as lower-case hex, the form JSON-RPC logs carry.
 */
export class EvmKeys {
  private readonly root: HDKey;

  constructor(
    seedHex: string,
    private readonly coinType = 60,
  ) {
    this.root = HDKey.fromMasterSeed(Buffer.from(seedHex, 'hex'));
  }

  treasury(): PrivateKeyAccount {
    return this.account(`m/44'/${this.coinType}'/0'/0/0`);
  }

  depositAddress(index: number): string {
    if (!Number.isSafeInteger(index) || index < 0 || index > MAX_INDEX) {
      throw new Error(`deposit address index ${index} is outside 0..${MAX_INDEX}`);
    }
    return this.account(`m/44'/${this.coinType}'/1'/0/${index}`).address.toLowerCase();
  }

  private account(path: string): PrivateKeyAccount {
    const key = this.root.derive(path).privateKey;
    if (!key) throw new Error(`no private key at ${path}`);
    return privateKeyToAccount(bytesToHex(key) as Hex);
  }
}

const opened = new WeakMap<ChainNode, Map<number, EvmKeys>>();

/** A node's keys at `coinType`, derived once per opened node and coin type. */
export function evmKeys(node: ChainNode, coinType: number): EvmKeys {
  let byCoin = opened.get(node);
  if (!byCoin) opened.set(node, (byCoin = new Map()));
  let keys = byCoin.get(coinType);
  if (!keys) byCoin.set(coinType, (keys = new EvmKeys(node.seedHex, coinType)));
  return keys;
}
