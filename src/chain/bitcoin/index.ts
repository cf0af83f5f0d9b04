/**
 * The Bitcoin family: Bitcoin's JSON-RPC (btcd or Bitcoin Core), native segwit deposit addresses, a refund
 * spending the deposit's own outputs (so no treasury to fund). Addresses are stored as shown.
 */
import type { ChainFamily } from '../family';
import { bitcoinKeys, isBitcoinAddress } from './keys';
import { bitcoinReader } from './reader';
import { registerBitcoinNode } from './register';
import { bitcoinSend } from './send';

export const bitcoin: ChainFamily = {
  depositAddress: (node, index) => bitcoinKeys(node).depositAddress(index),
  treasury: () => null,
  shownAddress: (stored) => stored,
  storedAddress: (given) => (isBitcoinAddress(given) ? given : undefined),
  reader: bitcoinReader,
  send: bitcoinSend,
  register: registerBitcoinNode,
};
