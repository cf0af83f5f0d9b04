/** Registering a node: the checks every family shares, then the family's own (src/chain/family.ts). */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/client';
import {
  EVM_NATIVE_COINS,
  SOLANA_NETWORKS,
  TOKEN_LOG_NETWORKS,
  UTXO_NETWORKS,
  isNodeNetwork,
} from '../coins/networks';
import type { RegisteredNode } from './family';
import { familyOfNetwork } from './families';
import { ChainNodeError, type ChainNodeSpec } from './nodes';

/**
 * Registers the node that watches `network` for `mode`, replacing the one there was (its deposit
 * addresses keep pointing at their transactions). Checks what can be checked first: the node answers,
 * every catalogue asset of the network is its native coin or a token contract with the catalogue's
 * decimals. Watching starts at the node's current confirmed tip.
 */
export async function addChainNode(db: Db, masterKey: string, spec: ChainNodeSpec): Promise<RegisteredNode> {
  if (!isNodeNetwork(spec.network)) {
    throw new ChainNodeError(
      `${spec.network} is not a network this service watches on a node (${[...Object.keys(EVM_NATIVE_COINS), ...Object.keys(TOKEN_LOG_NETWORKS), ...Object.keys(UTXO_NETWORKS), ...Object.keys(SOLANA_NETWORKS)].join(', ')}).`,
    );
  }
  const native =
    EVM_NATIVE_COINS[spec.network] ??
    TOKEN_LOG_NETWORKS[spec.network]?.nativeCoin ??
    UTXO_NETWORKS[spec.network]?.nativeCoin ??
    SOLANA_NETWORKS[spec.network]!.nativeCoin;
  if (!Number.isInteger(spec.confirmations) || spec.confirmations < 1 || spec.confirmations > 1000) {
    throw new ChainNodeError('confirmations must be a whole number from 1 to 1000.');
  }
  if (spec.faucetKey && spec.mode !== 'test') {
    throw new ChainNodeError('A faucet key is for test mode only: live deposits come from customers.');
  }
  const seedHex = spec.seedHex ?? randomBytes(32).toString('hex');
  if (!/^(?:[0-9a-f]{2}){16,64}$/i.test(seedHex)) {
    throw new ChainNodeError('The seed must be 16 to 64 bytes of hex.');
  }
  return familyOfNetwork(spec.network).register(db, masterKey, spec, { seedHex, native });
}
