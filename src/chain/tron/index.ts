/**
 * The TRON family: its Ethereum-compatible JSON-RPC answers `eth_getLogs` for TRC-20 `Transfer` logs, so
 * the EVM family's reader and registration serve it with TRON's addressing (T-addresses, coin type 195).
 * The service signs no TRON transaction: sends and refunds stay on the sandbox chain in test mode.
 */
import type { ChainFamily } from '../family';
import { evmKeys } from '../evm/keys';
import { evmReader } from '../evm/reader';
import { registerEvmNode } from '../evm/register';
import { tronAddressing } from './address';

export const tron: ChainFamily = {
  depositAddress: (node, index) => evmKeys(node, tronAddressing.coinType).depositAddress(index),
  treasury: (node) => tronAddressing.shown(evmKeys(node, tronAddressing.coinType).treasury().address),
  shownAddress: tronAddressing.shown,
  storedAddress: tronAddressing.stored,
  // TRON's JSON-RPC answers calls at the latest block only: its deposit addresses' balances are not compared.
  reader: (node) => ({ ...evmReader(node), balancesAt: undefined }),
  async send(_db, node, request) {
    if (request.mode === 'test') return 'sandbox';
    // Not reached by refunds: live deposits there carry no sender to refund to, so they are held for ops
    // (src/chain/watcher.ts). An on-ramp send (live ramps need ALLOW_SANDBOX_IN_LIVE) stops here: nothing
    // was signed, and the activity retries with this message for ops, who send by hand.
    throw new Error(
      `cannot send ${request.amount} ${request.currency} on ${node.network}: the service watches ${node.network} for deposits only and does not sign its transactions`,
    );
  },
  register: (db, masterKey, spec, keys) => registerEvmNode(db, masterKey, spec, keys, tronAddressing),
};
