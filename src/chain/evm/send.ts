/** Sends on an EVM node: from the treasury, as one transfer the service signs once per key. */
import type { Db } from '../../db/client';
import { findCryptoAsset } from '../../coins/catalogue';
import { isDepositOnlyNetwork } from '../../coins/networks';
import { parseUnits } from '../../lib/units';
import type { ChainSend } from '../family';
import { assetOnNode, nodeAddress, type ChainNode } from '../nodes';
import { sendFromTreasury } from '../transfers';

export async function evmSend(db: Db, node: ChainNode, request: ChainSend): Promise<string | 'sandbox'> {
  if (isDepositOnlyNetwork(node.network)) {
    if (request.mode === 'test') return 'sandbox';
    // Not reached by refunds: live deposits there carry no sender to refund to, so they are held for
    // ops (src/chain/watcher.ts). An on-ramp send (live ramps need ALLOW_SANDBOX_IN_LIVE) stops here:
    // nothing was signed, and the activity retries with this message for ops, who send by hand.
    throw new Error(
      `cannot send ${request.amount} ${request.currency} on ${node.network}: the service watches ${node.network} for deposits only and does not sign its transactions`,
    );
  }
  const asset = assetOnNode(node, request.currency);
  const found = await findCryptoAsset(db, request.currency, request.network);
  const units = found ? parseUnits(request.amount, found.decimals) : undefined;
  const to = nodeAddress(node.network, request.address);
  if (!asset || units === undefined || !to) {
    // Nothing was signed. The activity stays retrying with this message, for ops, until the node's
    // registration is mended (a token contract missing) or the transaction is cancelled.
    throw new Error(
      `cannot send ${request.amount} ${request.currency} to ${request.address} on ${node.network}: ${
        !asset ? `node ${node.id} has no contract for ${request.currency}` : 'not a valid amount or address'
      }`,
    );
  }
  return sendFromTreasury(db, node, request.idempotencyKey, { to, units, asset });
}
