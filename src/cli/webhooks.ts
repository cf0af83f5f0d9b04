import { merchantExists } from '../merchants/accounts';
import { webhookSchedule } from '../platform/config';
import { startWebhookRedeliveries } from '../temporal/client';
import { parseArgs } from 'node:util';
import { listWebhookEvents, prepareAuditedRedelivery } from '../transactions/webhook-events';
import { isMode } from '../lib/vocabulary';
import { actorOf, type Command } from './context';
import { CliError } from './errors';

export const commands: Record<string, Command> = {
  /** A merchant's webhook event log, newest first, with every attempt (as the API's event log). */
  async events(ctx, argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        merchant: { type: 'string' },
        mode: { type: 'string' },
        transaction: { type: 'string' },
        delivered: { type: 'string' },
        limit: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    if (!values.merchant) throw new CliError('--merchant is required');
    if (!values.mode || !isMode(values.mode)) throw new CliError('--mode must be test or live');
    if (!(await merchantExists(ctx.database.db, values.merchant)))
      throw new CliError(`Merchant ${values.merchant} not found.`);
    if (values.delivered !== undefined && values.delivered !== 'true' && values.delivered !== 'false')
      throw new CliError('--delivered must be true or false');
    const limit = values.limit === undefined ? 20 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new CliError('--limit must be 1 to 100');
    const page = await listWebhookEvents(
      ctx.database.db,
      ctx.config.MASTER_KEY,
      { merchantId: values.merchant, mode: values.mode },
      {
        limit,
        ...(values.transaction ? { transaction_id: values.transaction } : {}),
        ...(values.delivered ? { delivered: values.delivered === 'true' } : {}),
      },
    );
    ctx.print(page.data, values.json ?? false);
  },

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
    await startWebhookRedeliveries(client, ctx.config.TEMPORAL_TASK_QUEUE, runs);
    ctx.print({ redelivering: runs.map((r) => ({ event_id: r.eventId, run: r.run })) }, values.json ?? false);
  },
};
