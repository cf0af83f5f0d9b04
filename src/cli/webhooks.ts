import { desc, eq, or, sql } from 'drizzle-orm';
import { webhookAttempts, webhookEvents } from '../db/schema/index';
import { webhookSchedule } from '../platform/config';
import type { WebhookDeliveryInput } from '../contracts';
import { startWebhookDelivery } from '../temporal/client';
import type { Command } from './context';
import { CliError } from './errors';

export const commands: Record<string, Command> = {
  /** Starts a new delivery run for an event, or for every event of a transaction. */
  async redeliver(ctx, argv) {
    const id = argv.find((a) => !a.startsWith('--'));
    if (!id) throw new CliError('usage: webhooks redeliver TRANSACTION_ID|EVENT_ID');
    const events = await ctx.database.db
      .select()
      .from(webhookEvents)
      .where(or(eq(webhookEvents.id, id), eq(webhookEvents.transactionId, id)))
      .orderBy(desc(webhookEvents.createdAt));
    if (events.length === 0) throw new CliError(`No webhook event found for ${id}.`);
    const schedule = webhookSchedule(ctx.config);
    const client = await ctx.temporal();
    const started: { event_id: string; run: number }[] = [];
    for (const event of events) {
      const [last] = await ctx.database.db
        .select({ run: sql<number>`coalesce(max(${webhookAttempts.run}), 0)` })
        .from(webhookAttempts)
        .where(eq(webhookAttempts.eventId, event.id));
      const run = Number(last?.run ?? 0) + 1;
      await ctx.database.db
        .update(webhookEvents)
        .set({ status: 'pending' })
        .where(eq(webhookEvents.id, event.id));
      const input: WebhookDeliveryInput = { eventId: event.id, run, ...schedule };
      await startWebhookDelivery(client, ctx.config.TEMPORAL_TASK_QUEUE, input);
      started.push({ event_id: event.id, run });
    }
    ctx.print({ redelivering: started }, argv.includes('--json'));
  },
};
