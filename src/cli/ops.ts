import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { isTransactionKind, TRANSACTION_KINDS } from '../lib/vocabulary';
import { findStuck, forceFail, retryNow, showTransaction } from '../transactions/ops';
import { sendAftercare } from '../transactions/aftercare';
import { findTransaction, resolveOpsName } from '../transactions/lookup';
import { transactionBody } from '../transactions/view';
import type { UpdateOutcome } from '../temporal/client';
import { actorOf, type CliContext, type Command } from './context';
import { CliError } from './errors';
import { workflowsUrl } from '../temporal/ui-links';

/** `15m`, `2h`, `30s`, `1d` -> milliseconds. */
export function parseAge(text: string): number {
  const match = /^(\d+)(s|m|h|d)$/.exec(text);
  if (!match) throw new CliError(`--older-than must be a number and s, m, h or d (15m, 2h), got "${text}"`);
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

/**
 * The transaction a command names: by its id or by its order id (docs/operations.md), `--merchant` choosing
 * among merchants that use the same order id. A name nothing has is passed on as given: the command says it
 * is not found (or shows the audit of runs refused under it).
 */
async function idOf(
  ctx: CliContext,
  positionals: string[],
  usage: string,
  merchant?: string,
): Promise<string> {
  const [name] = positionals;
  if (!name) throw new CliError(`usage: ${usage}`);
  const found = await resolveOpsName(ctx.database.db, name, merchant);
  if (!found) return name;
  if ('id' in found) return found.id;
  const listed = found.ambiguous.map((t) => `${t.id} (merchant ${t.merchantId}, ${t.mode})`).join(', ');
  throw new CliError(
    `Order id ${name} names ${found.ambiguous.length} transactions: ${listed}. Give the transaction id, or --merchant MERCHANT_ID.`,
  );
}

/** Turns a refused or closed update into a clear error. */
function outcomeOf<T>(outcome: UpdateOutcome<T>, id: string): T {
  if (outcome.kind === 'refused') throw new CliError(outcome.message);
  if (outcome.kind === 'closed') throw new CliError(`The workflow of ${id} has ended: nothing to act on.`);
  return outcome.result;
}

const options = {
  actor: { type: 'string' },
  merchant: { type: 'string' },
  reason: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export const commands: Record<string, Command> = {
  async stuck(ctx, argv) {
    const { values } = parseArgs({
      args: argv,
      options: { 'older-than': { type: 'string' }, kind: { type: 'string' }, json: { type: 'boolean' } },
    });
    if (values.kind !== undefined && !isTransactionKind(values.kind))
      throw new CliError(`--kind must be one of ${TRANSACTION_KINDS.join(', ')}`);
    const stuck = await findStuck(ctx.database.db, await ctx.temporal(), {
      taskQueue: ctx.config.TEMPORAL_TASK_QUEUE,
      olderThanMs: parseAge(values['older-than'] ?? '15m'),
      ...(values.kind ? { kind: values.kind } : {}),
    });
    if (values.json) return ctx.print(stuck, true);
    if (stuck.length === 0) {
      process.stdout.write('No transaction is stuck.\n');
      return;
    }
    const header = `${'TRANSACTION'.padEnd(stuck[0]!.transactionId.length)}  ${'KIND'.padEnd(12)} ${'STATUS'.padEnd(8)} ${'AGE'.padStart(9)}  WAITING`;
    const lines = stuck.map(
      (s) =>
        `${s.transactionId}  ${s.kind.padEnd(12)} ${s.status.padEnd(8)} ${String(s.ageMinutes).padStart(5)} min  ${s.waiting}`,
    );
    process.stdout.write(`${[header, ...lines].join('\n')}\n`);
    const ui = ctx.config.TEMPORAL_UI_URL;
    if (ui) {
      const ids = [...new Set(stuck.map((s) => s.transactionId))];
      process.stdout.write(`In the Temporal UI: ${workflowsUrl(ui, ctx.config.TEMPORAL_NAMESPACE, ids)}\n`);
    }
  },

  async show(ctx, argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { json: { type: 'boolean' }, merchant: { type: 'string' } },
    });
    const id = await idOf(
      ctx,
      positionals,
      'ops show TRANSACTION_ID|ORDER_ID [--merchant ID]',
      values.merchant,
    );
    const shown = await showTransaction(ctx.database.db, await ctx.temporal(), id);
    if (!shown) throw new CliError(`Transaction ${id} not found.`);
    ctx.print(shown, values.json ?? false);
  },

  async retry(ctx, argv) {
    const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options });
    const id = await idOf(
      ctx,
      positionals,
      'ops retry TRANSACTION_ID|ORDER_ID [--actor NAME]',
      values.merchant,
    );
    const client: Client = await ctx.temporal();
    const { transaction, webhooks } = await retryNow(ctx.database.db, client, id, {
      actor: actorOf(values.actor),
    });
    if (transaction.kind !== 'done' && webhooks.length === 0) outcomeOf(transaction, id);
    ctx.print(
      {
        transaction: transaction.kind === 'done' ? transaction.result : transaction,
        webhooks_retried: webhooks,
      },
      values.json ?? false,
    );
  },

  async fail(ctx, argv) {
    const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options });
    const id = await idOf(
      ctx,
      positionals,
      'ops fail TRANSACTION_ID|ORDER_ID --reason TEXT [--actor NAME]',
      values.merchant,
    );
    if (!values.reason) throw new CliError('--reason is required');
    const outcome = await forceFail(ctx.database.db, await ctx.temporal(), id, {
      reason: values.reason,
      actor: actorOf(values.actor),
    });
    ctx.print(outcomeOf(outcome, id), values.json ?? false);
  },

  /** Records a chargeback the acquirer reported: the flag, a payin's credit taken back, the webhook. */
  async chargeback(ctx, argv) {
    const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options });
    const id = await idOf(ctx, positionals, 'ops chargeback TRANSACTION_ID|ORDER_ID', values.merchant);
    const row = await findTransaction(ctx.database.db, id);
    if (!row) throw new CliError(`Transaction ${id} not found.`);
    const outcome = await sendAftercare(
      { db: ctx.database.db, temporal: await ctx.temporal(), config: ctx.config },
      row.id,
      'chargeback',
      {
        reason: values.reason ?? '',
        actor: actorOf(values.actor),
      },
    );
    if ('refused' in outcome) throw new CliError(outcome.refused);
    ctx.print(transactionBody((await findTransaction(ctx.database.db, row.id)) ?? row), values.json ?? false);
  },
};
