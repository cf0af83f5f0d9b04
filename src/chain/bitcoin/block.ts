import * as P from 'micro-packed';
import { CompactSize, RawTx } from '@scure/btc-signer';
import { sha256x2 } from '@scure/btc-signer/utils.js';
import { hex } from '@scure/base';

/**
 * Raw blocks and transactions as a node serves them (`getblock <hash> 0`, `getrawtransaction <id> 0`):
 * exact satoshis as bigints, output scripts as bytes, transaction ids as the node shows them.
 */
const RawBlock = P.struct({ header: P.bytes(80), txs: P.array(CompactSize, RawTx) });

export interface BitcoinTx {
  txid: string;
  /** The outputs each input spends (`txid` all zeros for a coinbase). */
  inputs: { txid: string; index: number }[];
  outputs: { amount: bigint; script: Uint8Array }[];
}

type Decoded = ReturnType<typeof RawTx.decode>;

function fromDecoded(tx: Decoded): BitcoinTx {
  // The id hashes the transaction without its witnesses, shown byte-reversed.
  const stripped = RawTx.encode({ ...tx, segwitFlag: false, witnesses: undefined });
  return {
    txid: hex.encode(sha256x2(stripped).reverse()),
    inputs: tx.inputs.map((input) => ({ txid: hex.encode(input.txid), index: input.index })),
    outputs: tx.outputs.map((output) => ({ amount: output.amount, script: output.script })),
  };
}

export function parseBlock(rawHex: string): BitcoinTx[] {
  return RawBlock.decode(hex.decode(rawHex)).txs.map(fromDecoded);
}

export function parseTransaction(rawHex: string): BitcoinTx {
  return fromDecoded(RawTx.decode(hex.decode(rawHex)));
}

export const COINBASE_INPUT = '0'.repeat(64);
