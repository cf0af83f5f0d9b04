/** Sends on a Bitcoin node: no treasury, so what goes back spends the transaction's own deposits. */
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { depositAddresses } from '../../db/schema/index';
import { parseUnits } from '../../lib/units';
import type { ChainSend } from '../family';
import type { ChainNode } from '../nodes';
import { sendFromDeposits } from './spend';

export async function bitcoinSend(db: Db, node: ChainNode, request: ChainSend): Promise<string | 'sandbox'> {
  const units = parseUnits(request.amount, 8);
  if (units === undefined) throw new Error(`cannot send ${request.amount} BTC: not a valid amount`);
  const [paidIn] = await db
    .select({ address: depositAddresses.address })
    .from(depositAddresses)
    .where(eq(depositAddresses.transactionId, request.transactionId))
    .limit(1);
  // An on-ramp has no deposits to spend.
  if (!paidIn) {
    if (request.mode === 'test') return 'sandbox';
    throw new Error(
      `cannot send ${request.amount} BTC for ${request.transactionId}: the service sends on ${node.network} only from a transaction's own deposits`,
    );
  }
  return sendFromDeposits(db, node, {
    idempotencyKey: request.idempotencyKey,
    transactionId: request.transactionId,
    to: request.address,
    units,
  });
}
