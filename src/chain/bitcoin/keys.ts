import { HDKey } from '@scure/bip32';
import { Address, NETWORK, OutScript, TEST_NETWORK, getAddress } from '@scure/btc-signer';
import type { ChainNode } from '../nodes';

/** The address formats of Bitcoin's chains: `bc1…` on mainnet, `tb1…` on the test networks, `bcrt1…` on regtest. */
export type BitcoinChain = 'main' | 'test' | 'regtest';

type Network = typeof NETWORK;
const NETWORKS: Record<BitcoinChain, Network> = {
  main: NETWORK,
  test: TEST_NETWORK,
  regtest: { ...TEST_NETWORK, bech32: 'bcrt' },
};

/**
 * The chain a node serves, from `getblockchaininfo`'s `chain` (Bitcoin Core: main, test, testnet4, signet,
 * regtest; btcd: mainnet, testnet3, regtest, signet). btcd's simnet has addresses of its own: not taken.
 */
/** Whether `address` is a standard address of one of Bitcoin's chains (mainnet, the test networks, regtest). */
export function isBitcoinAddress(address: string): boolean {
  return Object.values(NETWORKS).some((network) => {
    try {
      Address(network).decode(address);
      return true;
    } catch {
      return false;
    }
  });
}

export function bitcoinChainOf(name: string): BitcoinChain | undefined {
  if (name === 'main' || name === 'mainnet') return 'main';
  if (['test', 'testnet3', 'testnet4', 'signet'].includes(name)) return 'test';
  if (name === 'regtest') return 'regtest';
  return undefined;
}

/**
 * The keys of one watched Bitcoin node, from its HD seed: deposit address `i` is native segwit (P2WPKH) at
 * BIP-84's m/84'/C'/1'/0/i (C is 0 on mainnet, 1 elsewhere). The service spends a deposit's own outputs to
 * refund it, so there is no treasury to fund.
 */
export class BitcoinKeys {
  private readonly root: HDKey;
  readonly network: Network;

  constructor(
    seedHex: string,
    readonly chain: BitcoinChain,
  ) {
    this.root = HDKey.fromMasterSeed(Buffer.from(seedHex, 'hex'));
    this.network = NETWORKS[chain];
  }

  depositKey(index: number): Uint8Array {
    if (!Number.isSafeInteger(index) || index < 0 || index > 2 ** 31 - 1) {
      throw new Error(`deposit address index ${index} is outside 0..${2 ** 31 - 1}`);
    }
    const coin = this.chain === 'main' ? 0 : 1;
    const key = this.root.derive(`m/84'/${coin}'/1'/0/${index}`).privateKey;
    if (!key) throw new Error(`no private key for deposit address ${index}`);
    return key;
  }

  depositAddress(index: number): string {
    return getAddress('wpkh', this.depositKey(index), this.network);
  }

  /** The address an output script pays, when it is a standard one. */
  addressOf(script: Uint8Array): string | undefined {
    try {
      const decoded = OutScript.decode(script);
      if (decoded.type === 'unknown') return undefined;
      return Address(this.network).encode(decoded);
    } catch {
      return undefined;
    }
  }

  /** The output script paying `address`, or undefined when it is no address of this chain. */
  scriptOf(address: string): Uint8Array | undefined {
    try {
      return OutScript.encode(Address(this.network).decode(address));
    } catch {
      return undefined;
    }
  }
}

const opened = new WeakMap<ChainNode, BitcoinKeys>();

/** A Bitcoin node's keys, derived once per opened node. */
export function bitcoinKeys(node: ChainNode): BitcoinKeys {
  let keys = opened.get(node);
  if (!keys) {
    keys = new BitcoinKeys(node.seedHex, (node.chainName ?? 'main') as BitcoinChain);
    opened.set(node, keys);
  }
  return keys;
}
