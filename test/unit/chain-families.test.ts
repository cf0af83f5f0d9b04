import { describe, expect, it } from 'vitest';
import { getAddress } from 'viem';
import { NODE_NETWORKS, type ChainFamilyName } from '../../src/coins/networks';
import { familyOf, familyOfNetwork } from '../../src/chain/families';
import type { ChainNode } from '../../src/chain/nodes';
import { EvmKeys, evmKeys } from '../../src/chain/evm/keys';
import { BitcoinKeys } from '../../src/chain/bitcoin/keys';
import { SolanaKeys } from '../../src/chain/solana/keys';
import { toTronAddress } from '../../src/chain/tron/address';

/** The family contract (src/chain/family.ts) as the registry and the chain connector use it. */
const seedHex = '11'.repeat(32);

function node(network: string, chainName: string | null = null): ChainNode {
  const served = NODE_NETWORKS[network]!;
  return {
    id: `chain_${network.toLowerCase()}`,
    mode: 'test',
    network,
    rpcUrl: 'http://127.0.0.1:1',
    confirmations: 1,
    tokens: {},
    nativeCoin: served.watchesNativeCoin ? served.nativeCoin : '',
    family: served.family,
    seedHex,
    chainName,
    scannedBlock: null,
    scannedHash: null,
    lateScannedBlock: null,
  };
}

describe('chain families', () => {
  it('serve every network a node can watch, and no other', () => {
    const served: Record<string, ChainFamilyName> = {};
    for (const [network, { family }] of Object.entries(NODE_NETWORKS)) {
      expect(familyOfNetwork(network), network).toBe(familyOf(node(network)));
      served[network] = family;
    }
    expect(served).toEqual({
      ETHEREUM: 'evm',
      BINANCE_SMART_CHAIN: 'evm',
      POLYGON: 'evm',
      AVALANCHE: 'evm',
      TRON: 'tron',
      BITCOIN: 'bitcoin',
      SOLANA: 'solana',
    });
    expect(familyOfNetwork('OMNI')).toBeUndefined();
    expect(familyOfNetwork('toString')).toBeUndefined();
  });

  it('give deposit addresses from the node seed, each at its own derivation, the same on every call', () => {
    const eth = node('ETHEREUM');
    const evm = familyOf(eth);
    expect(evm.depositAddress(eth, 7)).toBe(new EvmKeys(seedHex, 60).depositAddress(7));
    expect(evm.depositAddress(eth, 7)).toBe(evm.depositAddress(node('POLYGON'), 7));
    expect(evm.depositAddress(eth, 7)).not.toBe(evm.depositAddress(eth, 8));

    const tron = node('TRON');
    // One node's keys at two coin types stay apart (each derived once).
    expect(evmKeys(tron, 60).depositAddress(7)).toBe(evm.depositAddress(eth, 7));
    const stored = familyOf(tron).depositAddress(tron, 7);
    // Stored as the hex the node's logs carry, on TRON's coin type; shown as the T-address.
    expect(stored).toBe(new EvmKeys(seedHex, 195).depositAddress(7));
    expect(stored).not.toBe(evm.depositAddress(eth, 7));
    expect(familyOf(tron).shownAddress(stored)).toBe(toTronAddress(stored));

    const btc = node('BITCOIN', 'regtest');
    expect(familyOf(btc).depositAddress(btc, 7)).toBe(new BitcoinKeys(seedHex, 'regtest').depositAddress(7));
    expect(familyOf(btc).depositAddress(btc, 7)).toMatch(/^bcrt1/);

    const sol = node('SOLANA');
    expect(familyOf(sol).depositAddress(sol, 7)).toBe(new SolanaKeys(seedHex).depositAddress(7));
  });

  it('show a treasury where the family sends from one, and none on Bitcoin', () => {
    const eth = node('ETHEREUM');
    expect(familyOf(eth).treasury(eth)).toBe(new EvmKeys(seedHex, 60).treasury().address);
    const tron = node('TRON');
    expect(familyOf(tron).treasury(tron)).toBe(toTronAddress(new EvmKeys(seedHex, 195).treasury().address));
    expect(familyOf(tron).treasury(tron)).toMatch(/^T/);
    expect(familyOf(node('BITCOIN')).treasury(node('BITCOIN'))).toBeNull();
    const sol = node('SOLANA');
    expect(familyOf(sol).treasury(sol)).toBe(new SolanaKeys(seedHex).treasuryAddress());
  });

  it("read an address as its family writes it, and refuse another family's", () => {
    const evm = familyOfNetwork('ETHEREUM')!;
    const tron = familyOfNetwork('TRON')!;
    const solana = familyOfNetwork('SOLANA')!;
    const hex = '0xa614f803b6fd780986a42c78ec9c7f77e6ded13c';
    expect(evm.storedAddress(getAddress(hex))).toBe(hex);
    expect(evm.storedAddress(hex)).toBe(hex);
    // A checksummed address with one letter's case changed: refused, as a typo would be.
    expect(evm.storedAddress(getAddress(hex).replace('F', 'f'))).toBeUndefined();
    expect(evm.storedAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')).toBeUndefined();
    expect(tron.storedAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')).toBe(hex);
    expect(tron.shownAddress(hex)).toBe('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
    expect(solana.storedAddress(hex)).toBeUndefined();
    const bitcoin = familyOfNetwork('BITCOIN')!;
    expect(bitcoin.storedAddress('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq')).toBe(
      'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
    );
    expect(bitcoin.storedAddress(hex)).toBeUndefined();
    const mint = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
    expect(solana.storedAddress(mint)).toBe(mint);
  });

  it('send nothing on TRON: the sandbox chain stands in in test mode, and live mode says why', async () => {
    const tron = node('TRON');
    const request = {
      idempotencyKey: 'refund:PAx1:1',
      transactionId: 'PAx1',
      network: 'TRON',
      address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
      amount: '1.5',
      currency: 'USDT',
    };
    const db = undefined as never;
    await expect(familyOf(tron).send(db, tron, { ...request, mode: 'test' })).resolves.toBe('sandbox');
    await expect(
      familyOf(tron).send(db, { ...tron, mode: 'live' }, { ...request, mode: 'live' }),
    ).rejects.toThrow(/watches TRON for deposits only and does not sign its transactions/);
  });
});
