import {
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  currentUpdateInfo,
  patched,
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
} from '../src/contracts';
import { records, webhook } from './activities';
import { RETRY_AUDITED_FIRST, clock } from './waiting';
import { refusal } from './failures';

/**
 * Records the delivery in the attempt's own write instead of a separate step. Workflows started before
 * this change replay without it (README, "Changing a workflow safely").
 */
const DELIVERY_RECORDED_WITH_ATTEMPT = 'webhook-delivery-recorded-with-attempt';

/**
 * Delivers one webhook event: an attempt, then the next after the schedule's delay (the last delay
 * repeats), until a 2xx answer or until the window closes and the event is `undelivered`. Ops can cut a
 * wait short (`retryNow`).
 */
export async function webhookDelivery(input: WebhookDeliveryInput): Promise<'delivered' | 'undelivered'> {
  const startedAt = workflowInfo().startTime.getTime();
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
      // On the trail before the attempt goes (histories from before asked for the attempt first).
      if (patched(RETRY_AUDITED_FIRST)) {
        await record();
        retryRequested = true;
      } else {
        retryRequested = true;
        await record();
      }
      return 'The next attempt starts now.';
    },
    {
      description: 'Ops: make the next attempt now instead of after the wait. Data: {"actor": "you"}',
      validator: (_action: OpsAction | undefined) => {
        if (!waiting) throw refusal('Nothing to retry now: an attempt is under way or the delivery is over.');
      },
    },
  );
  const recordsDelivery = patched(DELIVERY_RECORDED_WITH_ATTEMPT);
  for (let attempt = 1; ; attempt++) {
    setCurrentDetails(`Attempt ${attempt}`);
    const outcome = await webhook.deliverWebhook.executeWithOptions({ summary: `Attempt ${attempt}` }, [
      {
        eventId: input.eventId,
        run: input.run,
        attempt,
        ...(recordsDelivery ? { recordDelivery: true } : {}),
      },
    ]);
    // Histories recorded before the attempt reported its error carry a plain boolean.
    const delivered = typeof outcome === 'boolean' ? outcome : outcome.delivered;
    if (delivered) {
      if (!recordsDelivery) await webhook.finishWebhookEvent({ eventId: input.eventId, status: 'delivered' });
      setCurrentDetails(`Delivered on attempt ${attempt}.`);
      await condition(allHandlersFinished);
      return 'delivered';
    }
    const delaySeconds = input.delaysSeconds[Math.min(attempt - 1, input.delaysSeconds.length - 1)] ?? 0;
    const elapsedMs = Date.now() - startedAt;
    if (delaySeconds <= 0 || elapsedMs + delaySeconds * 1000 > input.windowSeconds * 1000) {
      await webhook.finishWebhookEvent({ eventId: input.eventId, status: 'undelivered' });
      setCurrentDetails(`Undelivered after ${attempt} attempts.`);
      await condition(allHandlersFinished);
      return 'undelivered';
    }
    const error = typeof outcome === 'boolean' ? 'failed' : outcome.error;
    setCurrentDetails(
      `Attempt ${attempt} failed (${error}); next at ${clock(Date.now() + delaySeconds * 1000)}`,
    );
    waiting = true;
    retryRequested = false;
    await condition(() => retryRequested, delaySeconds * 1000, {
      summary: `Wait before attempt ${attempt + 1}`,
    });
    waiting = false;
  }
}

/**
 * Records the webhook event `eventKey` of a transaction and starts its first delivery run as an abandoned
 * child, so the delivery outlives the workflow that made it. Nothing when the transaction has no webhook URL.
 */
export async function sendWebhookEvent(transactionId: string, eventKey: string): Promise<void> {
  const event = await records.recordWebhookEvent({ transactionId, eventKey });
  if (!event) return;
  await startChild(webhookDelivery, {
    workflowId: workflowIds.webhook(event.eventId, 0),
    args: [
      {
        eventId: event.eventId,
        run: 0,
        delaysSeconds: event.delaysSeconds,
        windowSeconds: event.windowSeconds,
      },
    ],
    parentClosePolicy: ParentClosePolicy.ABANDON,
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    staticSummary: `Webhook ${event.eventId} for ${transactionId} (${eventKey})`,
  });
}
