import { sleep, workflowInfo } from '@temporalio/workflow';
import type { WebhookDeliveryInput } from '../src/contracts';
import { webhook } from './activities';

/**
 * Delivers one webhook event: an attempt, then the next after the schedule's delay (the last delay
 * repeats), until a 2xx answer or until the window closes and the event is `undelivered`.
 */
export async function webhookDelivery(input: WebhookDeliveryInput): Promise<'delivered' | 'undelivered'> {
  const startedAt = workflowInfo().startTime.getTime();
  for (let attempt = 1; ; attempt++) {
    const delivered = await webhook.deliverWebhook({ eventId: input.eventId, run: input.run, attempt });
    if (delivered) {
      await webhook.finishWebhookEvent({ eventId: input.eventId, status: 'delivered' });
      return 'delivered';
    }
    const delaySeconds = input.delaysSeconds[Math.min(attempt - 1, input.delaysSeconds.length - 1)] ?? 0;
    const elapsedMs = Date.now() - startedAt;
    if (delaySeconds <= 0 || elapsedMs + delaySeconds * 1000 > input.windowSeconds * 1000) {
      await webhook.finishWebhookEvent({ eventId: input.eventId, status: 'undelivered' });
      return 'undelivered';
    }
    await sleep(delaySeconds * 1000);
  }
}
