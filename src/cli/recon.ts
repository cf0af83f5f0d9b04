import { parseArgs } from 'node:util';
import { BREAK_STATES, type BreakState } from '../db/schema/index';
import {
  actOnBreak,
  BREAK_KINDS,
  BreakActionError,
  listBreaks,
  showBreak,
  type BreakRow,
} from '../reconciliation/breaks';
import { listRuns } from '../reconciliation/runs';
import { runReconciliation } from '../temporal/reconciliation';
import { actorOf, type Command } from './context';
import { CliError } from './errors';

function breakId(positionals: string[], usage: string): number {
  const [id] = positionals;
  if (!id || !/^\d{1,15}$/.test(id)) throw new CliError(`usage: ${usage}`);
  return Number(id);
}

const line = (b: BreakRow) =>
  `${String(b.id).padStart(6)}  ${b.state.padEnd(12)} ${b.source.padEnd(8)} ${b.kind.padEnd(18)} ${b.reference}\n        ${b.message}`;

/** Turns a refused ops action into a clear error. */
async function act<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof BreakActionError) throw new CliError(error.message);
    throw error;
  }
}

export const commands: Record<string, Command> = {
  /** Runs reconciliation now (docs/reconciliation.md) and prints what each source found. */
  async run(ctx, argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        source: { type: 'string', multiple: true },
        since: { type: 'string' },
        until: { type: 'string' },
        actor: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    for (const [name, value] of [
      ['--since', values.since],
      ['--until', values.until],
    ] as const)
      if (value !== undefined && Number.isNaN(Date.parse(value)))
        throw new CliError(`${name} must be a date and time (ISO 8601), got "${value}"`);
    // What has not happened yet cannot be read: a window into the future would be called read.
    if (values.until !== undefined && Date.parse(values.until) > Date.now())
      throw new CliError(`--until must not be in the future, got "${values.until}"`);
    const result = await runReconciliation(await ctx.temporal(), {
      taskQueue: ctx.config.TEMPORAL_TASK_QUEUE,
      actor: actorOf(values.actor),
      ...(values.source ? { sources: values.source } : {}),
      ...(values.since ? { since: new Date(values.since).toISOString() } : {}),
      ...(values.until ? { until: new Date(values.until).toISOString() } : {}),
    });
    if (values.json) return ctx.print(result, true);
    const { window, sources } = result.summary;
    process.stdout.write(`Run ${result.runId}: ${window.from} to ${window.to}\n`);
    for (const [source, s] of Object.entries(sources))
      process.stdout.write(
        `  ${source.padEnd(8)} ${s.found} breaks (${s.opened} new), ${s.resolved} resolved\n`,
      );
    process.stdout.write('Open breaks: npx payments recon list\n');
  },

  async list(ctx, argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        state: { type: 'string', multiple: true },
        kind: { type: 'string' },
        source: { type: 'string' },
        limit: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    const states = values.state ?? ['open', 'acknowledged'];
    for (const state of states)
      if (!(BREAK_STATES as readonly string[]).includes(state))
        throw new CliError(`--state must be one of ${BREAK_STATES.join(', ')}`);
    if (values.kind && !(BREAK_KINDS as readonly string[]).includes(values.kind))
      throw new CliError(`--kind must be one of ${BREAK_KINDS.join(', ')}`);
    if (values.limit !== undefined && !/^\d{1,4}$/.test(values.limit))
      throw new CliError('--limit must be a whole number up to 9999');
    const breaks = await listBreaks(ctx.database.db, {
      states: states as BreakState[],
      ...(values.kind ? { kind: values.kind } : {}),
      ...(values.source ? { source: values.source } : {}),
      ...(values.limit ? { limit: Number(values.limit) } : {}),
    });
    if (values.json) return ctx.print(breaks, true);
    if (breaks.length === 0) {
      process.stdout.write(`No ${states.join(' or ')} break.\n`);
      return;
    }
    process.stdout.write(
      `${'ID'.padStart(6)}  ${'STATE'.padEnd(12)} ${'SOURCE'.padEnd(8)} ${'KIND'.padEnd(18)} REFERENCE\n`,
    );
    for (const b of breaks) process.stdout.write(`${line(b)}\n`);
  },

  async show(ctx, argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { json: { type: 'boolean' } },
      allowPositionals: true,
    });
    const id = breakId(positionals, 'recon show BREAK_ID [--json]');
    const found = await showBreak(ctx.database.db, id);
    if (!found) throw new CliError(`No break ${id}.`);
    ctx.print(found, values.json ?? false);
  },

  /** Ops are on it: later runs keep checking it, and resolve it once it matches. */
  async ack(ctx, argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { actor: { type: 'string' }, json: { type: 'boolean' } },
      allowPositionals: true,
    });
    const id = breakId(positionals, 'recon ack BREAK_ID [--actor NAME]');
    const updated = await act(() => actOnBreak(ctx.database.db, id, 'acknowledge', actorOf(values.actor)));
    ctx.print(updated, values.json ?? false);
  },

  /** Ops decided the difference stands (with a reason): later runs leave it accepted. */
  async accept(ctx, argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { actor: { type: 'string' }, reason: { type: 'string' }, json: { type: 'boolean' } },
      allowPositionals: true,
    });
    const id = breakId(positionals, 'recon accept BREAK_ID --reason TEXT [--actor NAME]');
    const updated = await act(() =>
      actOnBreak(ctx.database.db, id, 'accept', actorOf(values.actor), values.reason),
    );
    ctx.print(updated, values.json ?? false);
  },

  async runs(ctx, argv) {
    const { values } = parseArgs({ args: argv, options: { json: { type: 'boolean' } } });
    const runs = await listRuns(ctx.database.db);
    if (values.json) return ctx.print(runs, true);
    if (runs.length === 0) {
      process.stdout.write('No reconciliation run yet.\n');
      return;
    }
    for (const r of runs)
      process.stdout.write(
        `${r.id}  ${r.state.padEnd(9)} ${r.trigger.padEnd(10)} ${r.windowStart.toISOString()} to ${r.windowEnd.toISOString()}  ${JSON.stringify(r.summary)}\n`,
      );
  },
};
