/** Sends on an EVM node: from the treasury, as one transfer the service signs once per key. */
import type { Db } from '../../db/client';
import { findCryptoAsset } from '../../coins/catalogue';
import { parseUnits } from '../../lib/units';
import type { ChainSend } from '../family';
import type { ChainNode } from '../nodes';
import { ethereumAddressing } from './addresses';
import { evmKeys } from './keys';
import { assetOnNode } from './rpc';
import { sendOnce } from './transfers';

export async function evmSend(db: Db, node: ChainNode, request: ChainSend): Promise<string> {
  const asset = assetOnNode(node, request.currency);
  const found = await findCryptoAsset(db, request.currency, request.network);
  const units = found ? parseUnits(request.amount, found.decimals) : undefined;
  const to = ethereumAddressing.stored(request.address);
  if (!asset || units === undefined || !to) {
    // Nothing was signed. The activity stays retrying with this message, for ops, until the node's
    // registration is mended (a token contract missing) or the transaction is cancelled.
    throw new Error(
      `cannot send ${request.amount} ${request.currency} to ${request.address} on ${node.network}: ${
        !asset ? `node ${node.id} has no contract for ${request.currency}` : 'not a valid amount or address'
      }`,
    );
  }
  const treasury = evmKeys(node, ethereumAddressing.coinType).treasury();
  return sendOnce(db, node, treasury, request.idempotencyKey, { to, units, asset });
}
