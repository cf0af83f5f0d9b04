/** The chain families the service knows: adding one is its folder and one line here. */
import type { Db } from '../db/client';
import type { ChainFamily, ChainReader } from './family';
import type { ChainNode } from './nodes';
import { bitcoinReader } from './bitcoin/reader';
import { evmReader } from './evm/reader';
import { solanaReader } from './solana/reader';

const families: Record<ChainNode['family'], ChainFamily> = {
  evm: { reader: (node) => evmReader(node) },
  bitcoin: { reader: bitcoinReader },
  solana: { reader: solanaReader },
};

/** The reader of a node, by its family. */
export function readerOf(node: ChainNode, db: Db): ChainReader {
  return families[node.family].reader(node, db);
}
