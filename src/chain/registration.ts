/**
 * Registering a node (the checks every family shares, then the family's own: src/chain/family.ts), and
 * the registered nodes as ops see them.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/client';
import { NODE_NETWORKS, nodeNetwork } from '../coins/networks';
import { withoutCredentials } from '../lib/urls';
import type { RegisteredNode } from './family';
import { familyOf, familyOfNetwork } from './families';
import { allChainNodes, ChainNodeError, type ChainNodeSpec } from './nodes';

/**
 * Registers the node that watches `network` for `mode`, replacing the one there was (its deposit
 * addresses keep pointing at their transactions). Checks what can be checked first: the node answers,
 * every catalogue asset of the network is its native coin or a token contract with the catalogue's
 * decimals. Watching starts at the node's current confirmed tip.
 */
export async function addChainNode(db: Db, masterKey: string, spec: ChainNodeSpec): Promise<RegisteredNode> {
  const network = nodeNetwork(spec.network);
  const family = familyOfNetwork(spec.network);
  if (!network || !family) {
    throw new ChainNodeError(
      `${spec.network} is not a network this service watches on a node (${Object.keys(NODE_NETWORKS).join(', ')}).`,
    );
  }
  const native = network.nativeCoin;
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
  return family.register(db, masterKey, spec, { seedHex, native });
}

/** Nodes as ops see them: the treasury to fund, where the watcher is; no secrets. */
export async function listChainNodes(db: Db, masterKey: string) {
  return (await allChainNodes(db, masterKey)).map(({ node, state, watchedBy }) => {
    const family = familyOf(node);
    return {
      chain_node_id: node.id,
      mode: node.mode,
      network: node.network,
      rpc_url: withoutCredentials(node.rpcUrl),
      confirmations: node.confirmations,
      tokens: Object.fromEntries(
        Object.entries(node.tokens).map(([code, contract]) => [code, family.shownAddress(contract)]),
      ),
      treasury: family.treasury(node),
      test_faucet: node.faucetKey !== undefined,
      state,
      scanned_block: node.scannedBlock?.toString() ?? null,
      watched_by: watchedBy,
    };
  });
}
