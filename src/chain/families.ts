/** The chain families the service knows: adding one is its folder and one line here. */
import type { Db } from '../db/client';
import type { ChainFamily, ChainReader } from './family';
import type { ChainNode } from './nodes';
import { SOLANA_NETWORKS, UTXO_NETWORKS } from '../coins/networks';
import { bitcoinReader } from './bitcoin/reader';
import { registerBitcoinNode } from './bitcoin/register';
import { bitcoinSend } from './bitcoin/send';
import { evmReader } from './evm/reader';
import { registerEvmNode } from './evm/register';
import { evmSend } from './evm/send';
import { solanaReader } from './solana/reader';
import { registerSolanaNode } from './solana/register';
import { solanaSend } from './solana/send';

const families: Record<ChainNode['family'], ChainFamily> = {
  evm: { reader: (node) => evmReader(node), send: evmSend, register: registerEvmNode },
  bitcoin: { reader: bitcoinReader, send: bitcoinSend, register: registerBitcoinNode },
  solana: { reader: solanaReader, send: solanaSend, register: registerSolanaNode },
};

/** The family that serves a network (src/coins/networks.ts says which networks each takes). */
export function familyOfNetwork(network: string): ChainFamily {
  return families[UTXO_NETWORKS[network] ? 'bitcoin' : SOLANA_NETWORKS[network] ? 'solana' : 'evm'];
}

/** The family a node belongs to. */
export function familyOf(node: ChainNode): ChainFamily {
  return families[node.family];
}

/** The reader of a node, by its family. */
export function readerOf(node: ChainNode, db: Db): ChainReader {
  return familyOf(node).reader(node, db);
}
