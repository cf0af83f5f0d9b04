import type { Client } from '@temporalio/client';
import { expireWaitUpdate, hostedDecisionUpdate, type HostedDecision } from '../contracts';
import { sendUpdate } from '../temporal/client';
import type { Db } from '../db/client';
import { ApiError, fieldError } from '../platform/errors';
import { lookupTransaction } from './lookup';
import type { MerchantScope } from './deps';
import { transactionBody, type TransactionBody } from './view';

/**
 * Hands the customer's answer on a hosted page to the transaction's workflow. False when the workflow
 * takes no answer any more (already answered, ended, or never waiting): the page then shows the state.
 */
export async function submitDecision(
  temporal: Client,
  row: { id: string; runId: string | null },
  decision: HostedDecision,
): Promise<boolean> {
  const outcome = await sendUpdate(temporal, row.id, hostedDecisionUpdate, decision, row.runId);
  return outcome.kind === 'done';
}

/**
 * The expire endpoint (test mode, docs/sandbox.md): ends the wait on the customer now, as if its time had
 * run out, and answers the transaction as it stood then (its outcome follows, as at the wait's end).
 */
export async function expireCustomerWait(
  deps: { db: Db; temporal: Client },
  merchant: MerchantScope,
  transactionId: string,
): Promise<TransactionBody> {
  const row = await lookupTransaction(deps.db, merchant, transactionId);
  if (!row) throw new ApiError('TRANSACTION_NOT_FOUND');
  const outcome = await sendUpdate(deps.temporal, row.id, expireWaitUpdate, {}, row.runId);
  if (outcome.kind === 'refused') fieldError('transaction_id', outcome.message);
  if (outcome.kind === 'closed') fieldError('transaction_id', 'This transaction waits on no customer.');
  return transactionBody((await lookupTransaction(deps.db, merchant, row.id)) ?? row);
}
