import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  currentUpdateInfo,
  deprecatePatch,
  setCurrentDetails,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import {
  actorOf,
  webhookRetryNowUpdate,
  workflowIds,
  type OpsAction,
  type WebhookDeliveryInput,
  type WebhookRedeliveryInput,
} from '../src/contracts';
import { records, webhook, webhookBatch } from './activities';
import { RETRY_AUDITED_FIRST, clock } from './waiting';
import { refusal } from './failures';

/**
 * The transaction's own workflow records the event and makes the first attempt in one step; a delivery
 * workflow starts only to retry. Deprecated: histories from before it (which started a delivery workflow
 * for every event) can no longer be open (docs/architecture.md, retiring a patch).
 */
const FIRST_ATTEMPT_IN_THE_TRANSACTION = 'webhook-first-attempt-in-the-transaction';

/**
 * Delivers one webhook event: an attempt, then the next after the schedule's delay (the last delay
 * repeats), until a 2xx answer or until the window closes and the event is `undelivered`. Ops can cut a
 * wait short (`retryNow`).
 */
export async function webhookDelivery(input: WebhookDeliveryInput): Promise<'delivered' | 'undelivered'> {
  const startedAt = input.firstAttemptAt ?? workflowInfo().startTime.getTime();
  let retryRequested = false;
  let waiting = false;
  setHandler(
    webhookRetryNowUpdate,
    async (action: OpsAction | undefined) => {
      const record = () =>
        records.recordWebhookOpsAction({
          eventId: input.eventId,
          key: `retryWebhook:${input.run}:${currentUpdateInfo()?.id ?? 'retryNow'}`,
          actor: actorOf(action),
          action: 'retryWebhook',
        });
      // On the trail before the attempt goes.
      deprecatePatch(RETRY_AUDITED_FIRST);
      await record();
      retryRequested = true;
      return 'The next attempt starts now.';
    },
    {
      description: 'Ops: make the next attempt now instead of after the wait. Data: {"actor": "you"}',
      validator: (_action: OpsAction | undefined) => {
        if (!waiting) throw refusal('Nothing to retry now: an attempt is under way or the delivery is over.');
      },
    },
  );
  /** Waits before the attempt after `attempt`; false when the window would close first. */
  const pause = async (attempt: number, error: string): Promise<boolean> => {
    const delaySeconds = input.delaysSeconds[Math.min(attempt - 1, input.delaysSeconds.length - 1)] ?? 0;
    const elapsedMs = Date.now() - startedAt;
    if (delaySeconds <= 0 || elapsedMs + delaySeconds * 1000 > input.windowSeconds * 1000) return false;
    setCurrentDetails(
      `Attempt ${attempt} failed (${error}); next at ${clock(Date.now() + delaySeconds * 1000)}`,
    );
    waiting = true;
    retryRequested = false;
    await condition(() => retryRequested, delaySeconds * 1000, {
      summary: `Wait before attempt ${attempt + 1}`,
    });
    waiting = false;
    return true;
  };
  const giveUp = async (attempts: number): Promise<'undelivered'> => {
    await webhook.finishWebhookEvent({ eventId: input.eventId, status: 'undelivered', run: input.run });
    setCurrentDetails(`Undelivered after ${attempts} attempts.`);
    await condition(allHandlersFinished);
    return 'undelivered';
  };
  // Started to retry: the transaction's workflow made the first attempt.
  const made = input.attemptsMade ?? 0;
  if (made > 0 && !(await pause(made, input.lastError ?? 'failed'))) return giveUp(made);
  for (let attempt = made + 1; ; attempt++) {
    setCurrentDetails(`Attempt ${attempt}`);
    const outcome = await webhook.deliverWebhook.executeWithOptions({ summary: `Attempt ${attempt}` }, [
      {
        eventId: input.eventId,
        run: input.run,
        attempt,
        recordDelivery: true,
      },
    ]);
    // Histories recorded before the attempt reported its error carry a plain boolean.
    const delivered = typeof outcome === 'boolean' ? outcome : outcome.delivered;
    if (delivered) {
      setCurrentDetails(`Delivered on attempt ${attempt}.`);
      await condition(allHandlersFinished);
      return 'delivered';
    }
    const error = (typeof outcome === 'boolean' ? null : outcome.error) ?? 'failed';
    if (!(await pause(attempt, error))) return giveUp(attempt);
  }
}

/**
 * Records the webhook event `eventKey` of a transaction and makes its first attempt; when that fails, its
 * delivery run goes on in an abandoned child, so the retries outlive the workflow that made the event.
 * Nothing when the transaction has no webhook URL.
 */
export async function sendWebhookEvent(transactionId: string, eventKey: string): Promise<void> {
  deprecatePatch(FIRST_ATTEMPT_IN_THE_TRANSACTION);
  const firstAttemptAt = Date.now();
  const first = await webhook.recordAndDeliverWebhook.executeWithOptions(
    { summary: `Webhook ${eventKey}, attempt 1` },
    [{ transactionId, eventKey }],
  );
  if (!first || first.delivered) return;
  await startDelivery(transactionId, eventKey, {
    eventId: first.eventId,
    run: 0,
    delaysSeconds: first.delaysSeconds,
    windowSeconds: first.windowSeconds,
    attemptsMade: 1,
    firstAttemptAt,
    ...(first.error ? { lastError: first.error } : {}),
  });
}

/**
 * Many redelivery runs (an ops or merchant redelivery, a CLI one of a transaction's events): their first
 * attempts go together in one step, bounded per merchant endpoint; only a run whose first attempt failed
 * goes on, in a delivery workflow of its own that retries on the schedule.
 */
export async function webhookRedelivery(
  input: WebhookRedeliveryInput,
): Promise<{ delivered: number; retrying: number }> {
  const firstAttemptAt = Date.now();
  setCurrentDetails(`First attempts of ${input.runs.length} events`);
  const outcomes = await webhookBatch.deliverWebhooks.executeWithOptions(
    { summary: `First attempts of ${input.runs.length} events` },
    [{ runs: input.runs.map(({ eventId, run }) => ({ eventId, run })) }],
  );
  let retrying = 0;
  for (const [i, run] of input.runs.entries()) {
    const { delivered, error } = outcomes[i]!;
    if (delivered) continue;
    retrying += 1;
    try {
      await startChild(webhookDelivery, {
        workflowId: workflowIds.webhook(run.eventId, run.run),
        args: [{ ...run, attemptsMade: 1, firstAttemptAt, ...(error ? { lastError: error } : {}) }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        staticSummary: `Webhook ${run.eventId}, run ${run.run}: retries`,
      });
    } catch (failure) {
      // Another redelivery of the same run (ops' from the Temporal UI, an overlapping batch) already
      // retries it: it is under way. The other runs still get theirs.
      if (!(failure instanceof WorkflowExecutionAlreadyStartedError)) throw failure;
    }
  }
  const delivered = input.runs.length - retrying;
  setCurrentDetails(`${delivered} delivered at the first attempt, ${retrying} retrying.`);
  return { delivered, retrying };
}

/** Starts the event's delivery run 0 as an abandoned child: it outlives the workflow that made the event. */
async function startDelivery(
  transactionId: string,
  eventKey: string,
  input: WebhookDeliveryInput,
): Promise<void> {
  await startChild(webhookDelivery, {
    workflowId: workflowIds.webhook(input.eventId, 0),
    args: [input],
    parentClosePolicy: ParentClosePolicy.ABANDON,
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    staticSummary: `Webhook ${input.eventId} for ${transactionId} (${eventKey})`,
  });
}
