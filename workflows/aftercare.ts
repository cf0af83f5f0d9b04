import { allHandlersFinished, condition } from '@temporalio/workflow';
import { UpdateProofs, setInternalHandler } from './proofs';
import {
  chargebackUpdate,
  refundUpdate,
  type AftercareInput,
  type AftercareKind,
  type AftercareOutcome,
  type AftercareRequest,
} from '../src/contracts';
import { chain, ledger, records, store } from './activities';
import { attempt, refusal } from './failures';
import { sendWebhookEvent } from './webhook-delivery';

export const CANNOT_REFUND = 'This transaction cannot be refunded.';
export const CANNOT_CHARGE_BACK = 'This transaction cannot be charged back.';
export const ALREADY_REFUNDED = 'Transaction has already been refunded.';
export const ALREADY_CHARGED_BACK = 'Transaction has already been charged back.';
/** Every refund and chargeback names who asked, for the audit trail. */
const WHO_ASKS = 'Who asks must be named (actor).';
export const CHARGEBACK_TEST_ONLY = 'Chargebacks can only be simulated in test mode.';

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
  const proofs = new UpdateProofs(input);
  setInternalHandler(proofs, refundUpdate, (request) => oneAtATime('refund', request), {
    description: "the merchant's refund of the settled transaction, in full.",
    validator: ({ reason, actor }) => {
      if (typeof reason !== 'string' || reason.trim().length === 0 || reason.length > 500)
        throw refusal('A reason of 1 to 500 characters is required.');
      if (!actor) throw refusal(WHO_ASKS);
    },
  });
  setInternalHandler(proofs, chargebackUpdate, (request) => oneAtATime('chargeback', request), {
    description: 'a chargeback of the settled transaction (test mode).',
    validator: ({ actor }) => {
      if (!actor) throw refusal(WHO_ASKS);
    },
  });
  await proofs.bound();
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
  // Chargebacks are simulated in test mode only, whoever asks (older histories read no mode).
  if (kind === 'chargeback' && state.mode !== undefined && state.mode !== 'test')
    return { refused: CHARGEBACK_TEST_ONLY };

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
    // Requests from before the trail recorded who asked name the merchant's API.
    actor: request.actor ?? 'merchant',
    reason: request.reason,
  });
  await sendWebhookEvent(transactionId, kind);
  return { applied: true };
}
