import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
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
  const outcome = await sendAftercare(deps.temporal, deps.config, row.id, kind, {
    reason: input.reason,
    actor: `merchant:${merchant.merchantId}`,
  });
  if ('refused' in outcome) fieldError('transaction_id', outcome.refused);
  const after = (await lookupTransaction(deps.db, merchant, row.id)) ?? row;
  return transactionBody(after);
}

export async function sendAftercare(
  client: Client,
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'MASTER_KEY'>,
  transactionId: string,
  kind: AftercareKind,
  request: AftercareRequest,
): Promise<AftercareOutcome> {
  const startWorkflowOperation = new WithStartWorkflowOperation<WorkflowSignatures['aftercare']>(
    'aftercare',
    {
      workflowId: workflowIds.aftercare(transactionId),
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [{ transactionId, updateKey: updateKeyOf(config.MASTER_KEY) }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      staticSummary: `Aftercare of ${transactionId}`,
    },
  );
  return client.workflow.executeUpdateWithStart(kind === 'refund' ? refundUpdate : chargebackUpdate, {
    startWorkflowOperation,
    args: [request],
  });
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
