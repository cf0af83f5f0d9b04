/** The chain families the service knows: adding one is its folder and one line here. */
import type { Db } from '../db/client';
import type { ChainFamily, ChainReader } from './family';
import type { ChainNode } from './nodes';
import { bitcoinReader } from './bitcoin/reader';
import { bitcoinSend } from './bitcoin/send';
import { evmReader } from './evm/reader';
import { evmSend } from './evm/send';
import { solanaReader } from './solana/reader';
import { solanaSend } from './solana/send';

const families: Record<ChainNode['family'], ChainFamily> = {
  evm: { reader: (node) => evmReader(node), send: evmSend },
  bitcoin: { reader: bitcoinReader, send: bitcoinSend },
  solana: { reader: solanaReader, send: solanaSend },
};

/** The family a node belongs to. */
export function familyOf(node: ChainNode): ChainFamily {
  return families[node.family];
}

/** The reader of a node, by its family. */
export function readerOf(node: ChainNode, db: Db): ChainReader {
  return familyOf(node).reader(node, db);
}
