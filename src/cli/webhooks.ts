import { webhookSchedule } from '../platform/config';
import { startWebhookDelivery } from '../temporal/client';
import { prepareRedelivery } from '../transactions/webhook-events';
import type { Command } from './context';
import { CliError } from './errors';

export const commands: Record<string, Command> = {
  /** Starts a new delivery run for an event, or for every event of a transaction. */
  async redeliver(ctx, argv) {
    const id = argv.find((a) => !a.startsWith('--'));
    if (!id) throw new CliError('usage: webhooks redeliver TRANSACTION_ID|EVENT_ID');
    const runs = await prepareRedelivery(ctx.database.db, id, webhookSchedule(ctx.config));
    if (runs.length === 0) throw new CliError(`No webhook event found for ${id}.`);
    const client = await ctx.temporal();
    for (const run of runs) await startWebhookDelivery(client, ctx.config.TEMPORAL_TASK_QUEUE, run);
    ctx.print(
      { redelivering: runs.map((r) => ({ event_id: r.eventId, run: r.run })) },
      argv.includes('--json'),
    );
  },
};
