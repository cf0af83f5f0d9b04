import { webhookSchedule } from '../platform/config';
import { startWebhookDelivery } from '../temporal/client';
import { parseArgs } from 'node:util';
import { prepareAuditedRedelivery } from '../transactions/webhook-events';
import { actorOf, type Command } from './context';
import { CliError } from './errors';

export const commands: Record<string, Command> = {
  /** Starts a new delivery run for an event, or for every event of a transaction. */
  async redeliver(ctx, argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { actor: { type: 'string' }, json: { type: 'boolean' } },
    });
    const [id] = positionals;
    if (!id) throw new CliError('usage: webhooks redeliver TRANSACTION_ID|EVENT_ID [--actor NAME]');
    const actor = actorOf(values.actor);
    const runs = await prepareAuditedRedelivery(ctx.database.db, id, webhookSchedule(ctx.config), actor);
    if (runs.length === 0) throw new CliError(`No webhook event found for ${id}.`);
    const client = await ctx.temporal();
    for (const run of runs) await startWebhookDelivery(client, ctx.config.TEMPORAL_TASK_QUEUE, run);
    ctx.print({ redelivering: runs.map((r) => ({ event_id: r.eventId, run: r.run })) }, values.json ?? false);
  },
};
