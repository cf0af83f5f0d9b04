import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import {
  chargebackUpdate,
  refundUpdate,
  workflowIds,
  type AftercareKind,
  type AftercareOutcome,
  type AftercareRequest,
  type WorkflowSignatures,
} from '../contracts';
import { ApiError, fieldError } from '../platform/errors';
import type { Config } from '../platform/config';
import { updateKeyOf } from '../ciphers/update-proof';
import { lookupTransaction } from './lookup';
import { transactionBody, type TransactionBody, type TransactionRow } from './view';
import { JsonNumber } from '../lib/json';
import { canonicalDecimal } from '../lib/units';
import type { MerchantScope, TransactionDeps } from './deps';
import type { Db } from '../db/client';
import { sendInternalUpdate } from '../temporal/client';
import { recordAftercareTicket } from './runs';

/**
 * A refund or chargeback of one of the merchant's transactions (docs/api.md): handed to the transaction's
 * aftercare workflow by update-with-start, so requests on the same transaction apply one at a time, and
 * answered with the transaction's body once applied, or a 422 with the reason it was refused.
 */
export async function requestAftercare(
  deps: Pick<TransactionDeps, 'db' | 'temporal' | 'config'>,
  merchant: MerchantScope,
  kind: AftercareKind,
  input: { transaction_id: string; reason: string; amount?: unknown },
): Promise<TransactionBody> {
  const row = await lookupTransaction(deps.db, merchant, input.transaction_id);
  if (!row) throw new ApiError('TRANSACTION_NOT_FOUND');
  if (input.amount !== undefined && !isWholeAmount(input.amount, row))
    fieldError(
      'amount',
      'Partial refunds are not supported: a refund returns the whole amount, so leave amount out.',
    );
  const outcome = await sendAftercare(deps, row.id, kind, {
    reason: input.reason,
    actor: `merchant:${merchant.merchantId}`,
  });
  if ('refused' in outcome) fieldError('transaction_id', outcome.refused);
  const after = (await lookupTransaction(deps.db, merchant, row.id)) ?? row;
  return transactionBody(after);
}

/**
 * Hands a refund or chargeback to the transaction's aftercare workflow: the run under way, or one started
 * for it (its ticket recorded first, which the run claims as its own: docs/operations.md, what binds a
 * run). A run that ends between the start and the update (it had finished its last request) is replaced by
 * a new one.
 */
export async function sendAftercare(
  deps: { db: Db; temporal: Client; config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'MASTER_KEY'> },
  transactionId: string,
  kind: AftercareKind,
  request: AftercareRequest,
): Promise<AftercareOutcome> {
  const workflowId = workflowIds.aftercare(transactionId);
  for (let tries = 0; ; tries++) {
    const ticket = randomBytes(16).toString('hex');
    await recordAftercareTicket(deps.db, transactionId, ticket);
    const handle = await deps.temporal.workflow.start<WorkflowSignatures['aftercare']>('aftercare', {
      workflowId,
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      args: [{ transactionId, ticket, updateKey: updateKeyOf(deps.config.MASTER_KEY) }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      staticSummary: `Aftercare of ${transactionId}`,
    });
    const outcome = await sendInternalUpdate(
      deps.temporal,
      workflowId,
      kind === 'refund' ? refundUpdate : chargebackUpdate,
      request,
      handle.firstExecutionRunId,
    );
    if (outcome.kind === 'done') return outcome.result;
    if (outcome.kind === 'refused') return { refused: outcome.message };
    if (tries >= 2) throw new Error(`the aftercare of ${transactionId} closed before it took the ${kind}`);
  }
}

/** Whether an `amount` sent with a refund is the transaction's whole amount, as its body states it. */
function isWholeAmount(given: unknown, row: TransactionRow): boolean {
  const text =
    given instanceof JsonNumber ? given.text : typeof given === 'string' ? given.trim() : undefined;
  if (text === undefined) return false;
  if (row.amountMinor !== null) return /^\d+$/.test(text) && BigInt(text) === row.amountMinor;
  const stated = canonicalDecimal(text);
  return stated !== undefined && row.amountDecimal !== null && stated === canonicalDecimal(row.amountDecimal);
}
