import { allHandlersFinished, condition, setHandler } from '@temporalio/workflow';
import {
  chargebackUpdate,
  refundUpdate,
  type AftercareInput,
  type AftercareKind,
  type AftercareOutcome,
  type AftercareRequest,
} from '../src/contracts';
import { chain, ledger, records, store } from './activities';
import { attempt } from './failures';
import { sendWebhookEvent } from './webhook-delivery';

export const CANNOT_REFUND = 'This transaction cannot be refunded.';
export const CANNOT_CHARGE_BACK = 'This transaction cannot be charged back.';
export const ALREADY_REFUNDED = 'Transaction has already been refunded.';
export const ALREADY_CHARGED_BACK = 'Transaction has already been charged back.';

/**
 * What happens to a settled transaction afterwards: refunds and chargebacks, one at a time. The API starts
 * it by update-with-start under an id derived from the transaction (`workflowIds.aftercare`), so requests
 * that meet while it runs queue here, and one that comes after it ended starts a run that reads what the
 * earlier one projected: of a refund and a chargeback racing, exactly one applies. Its effects (the
 * acquirer's refund, the crypto sent back, the wallet credit taken back) are keyed by the transaction, so
 * a retried step never applies twice. The run ends once no request is left.
 */
export async function aftercare(input: AftercareInput): Promise<void> {
  let queue: Promise<unknown> = Promise.resolve();
  let received = 0;
  const oneAtATime = (kind: AftercareKind, request: AftercareRequest): Promise<AftercareOutcome> => {
    received += 1;
    const run = queue.then(() => apply(input.transactionId, kind, request));
    queue = run.catch(() => undefined);
    return run;
  };
  setHandler(refundUpdate, (request) => oneAtATime('refund', request), {
    description: 'Refunds the settled transaction in full. Data: {"reason": "why"}',
    validator: ({ reason }) => {
      if (typeof reason !== 'string' || reason.trim().length === 0 || reason.length > 500)
        throw new Error('A reason of 1 to 500 characters is required.');
    },
  });
  setHandler(chargebackUpdate, (request) => oneAtATime('chargeback', request), {
    description: 'Records a chargeback of the settled transaction (test mode).',
  });
  await condition(() => received > 0 && allHandlersFinished());
}

async function apply(
  transactionId: string,
  kind: AftercareKind,
  request: AftercareRequest,
): Promise<AftercareOutcome> {
  const state = await store.aftercareState({ transactionId });
  if (state.refunded) return { refused: ALREADY_REFUNDED };
  if (state.chargeback) return { refused: ALREADY_CHARGED_BACK };
  const payin = state.kind === 'crypto_payin';
  if (state.status !== 'SUCCESS' || !(payin || state.kind === 'card'))
    return { refused: kind === 'refund' ? CANNOT_REFUND : CANNOT_CHARGE_BACK };

  let refundReference: string | undefined;
  if (kind === 'refund' && state.kind === 'card') {
    if (!state.terminalId || !state.connector) return { refused: CANNOT_REFUND };
    const refunded = await attempt(() =>
      chain.refundCard({
        transactionId,
        connector: state.connector!,
        terminalId: state.terminalId!,
        ...(state.acquirerReference ? { reference: state.acquirerReference } : {}),
      }),
    );
    if (refunded.kind === 'failed') return { refused: refunded.message };
    // The acquirer is asked until it answers; anything else is a fault for ops, not a guess.
    if (refunded.kind !== 'done') throw new Error(`the refund of ${transactionId} failed`);
    refundReference = refunded.value;
  }
  if (payin) {
    if (kind === 'refund' && !state.sendersKnown) return { refused: CANNOT_REFUND };
    // The wallet gives the credit back first: a refusal there leaves nothing half done.
    const reversed = await attempt(() => ledger.reverseCredit({ transactionId, step: kind }));
    if (reversed.kind === 'failed') return { refused: reversed.message };
    if (reversed.kind !== 'done') throw new Error(`the ${kind} of ${transactionId} failed in the ledger`);
    if (kind === 'refund') await chain.refundPayment({ transactionId });
  }

  await records.markAftercare({
    transactionId,
    kind,
    ...(refundReference ? { reference: refundReference } : {}),
    ...(request.actor ? { actor: request.actor, reason: request.reason } : {}),
  });
  await sendWebhookEvent(transactionId, kind);
  return { applied: true };
}
