/** The EVM family: Ethereum's JSON-RPC, the network's coin and its ERC-20 tokens, keys at coin type 60. */
import type { ChainFamily } from '../family';
import { ethereumAddressing } from './addresses';
import { evmKeys } from './keys';
import { evmReader } from './reader';
import { registerEvmNode } from './register';
import { evmSend } from './send';

export const evm: ChainFamily = {
  depositAddress: (node, index) => evmKeys(node, ethereumAddressing.coinType).depositAddress(index),
  treasury: (node) => evmKeys(node, ethereumAddressing.coinType).treasury().address,
  shownAddress: ethereumAddressing.shown,
  storedAddress: ethereumAddressing.stored,
  reader: (node) => evmReader(node),
  send: evmSend,
  register: (db, masterKey, spec, keys) => registerEvmNode(db, masterKey, spec, keys, ethereumAddressing),
};
