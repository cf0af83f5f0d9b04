/** The chain families the service knows: adding one is its folder and its line here (docs/architecture.md). */
import type { ChainFamilyName } from '../coins/networks';
import { nodeNetwork } from '../coins/networks';
import type { ChainFamily, ChainReader } from './family';
import type { ChainNode } from './nodes';
import type { Db } from '../db/client';
import { bitcoin } from './bitcoin/index';
import { evm } from './evm/index';
import { solana } from './solana/index';
import { tron } from './tron/index';

const families: Record<ChainFamilyName, ChainFamily> = { evm, tron, bitcoin, solana };

/** The family that serves a network (src/coins/networks.ts says which networks each takes). */
export function familyOfNetwork(network: string): ChainFamily | undefined {
  const served = nodeNetwork(network);
  return served ? families[served.family] : undefined;
}

/** The family a node belongs to. */
export function familyOf(node: ChainNode): ChainFamily {
  return families[node.family];
}

/** The reader of a node, by its family. */
export function readerOf(node: ChainNode, db: Db): ChainReader {
  return familyOf(node).reader(node, db);
}
