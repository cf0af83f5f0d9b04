import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { Db } from '../src/db/client';
import type { ReconciliationInput } from '../src/contracts';
import type { Recorded } from '../src/reconciliation/breaks';
import type { ReconciliationLeg } from '../src/reconciliation/leg';
import { ledgerLeg } from '../src/reconciliation/ledger';
import { sandboxLeg } from '../src/reconciliation/sandbox';
import { stripeLeg } from './connectors/stripe-books';
import { finishRun, planRun, reconcileSource, type Window } from '../src/reconciliation/runs';
import { CHAIN_BLOCKS_PER_RUN, chainCutOffs, chainLeg, firstBlockOf } from '../src/chain/reconciliation';

/**
 * Every reconciliation leg, by source: the ledger against itself and the workflows, against each
 * processor's books (Stripe's when the worker can reach it), and against the chains the service watches
 * (every family through its reader; it needs the master key to open the nodes). A new acquirer adds its
 * leg here (docs/reconciliation.md).
 */
export function reconciliationLegs(
  db: Db,
  options: {
    temporal?: { client: Client; taskQueue: string };
    stripe?: { masterKey: string; apiUrl?: string };
    masterKey?: string;
  } = {},
): ReconciliationLeg[] {
  return [
    ledgerLeg(db, options.temporal),
    sandboxLeg(db),
    ...(options.stripe ? [stripeLeg(db, options.stripe)] : []),
    ...(options.masterKey ? [chainLeg(db, options.masterKey)] : []),
  ];
}

/**
 * The steps of a reconciliation run: plan its window, read each source into breaks, finish. Each is
 * idempotent by the run's id: a retried step plans the same window, and records what it finds once.
 */
/**
 * Runs one step, heartbeating every 5 s while it does (outside an activity, as in tests, it just runs): the
 * step's heartbeat timeout then tells a dead worker from a long read.
 */
async function beating<T>(step: () => Promise<T>): Promise<T> {
  const context = activityContext();
  const beat = context ? setInterval(() => context.heartbeat(), 5_000) : undefined;
  try {
    return await step();
  } finally {
    clearInterval(beat);
  }
}

/** The running activity's context, or none outside one. */
function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

export function reconciliationActivities(deps: {
  db: Db;
  taskQueue: string;
  lagMs: number;
  temporal?: () => Client | undefined;
  stripe: { masterKey: string; apiUrl?: string };
}) {
  const legs = () => {
    const client = deps.temporal?.();
    return reconciliationLegs(deps.db, {
      ...(client ? { temporal: { client, taskQueue: deps.taskQueue } } : {}),
      stripe: deps.stripe,
      masterKey: deps.stripe.masterKey,
    });
  };
  return {
    async planReconciliation(
      input: ReconciliationInput & { runId: string },
    ): Promise<{ window: Window; sources: string[] }> {
      const known = legs().map((leg) => leg.source);
      const unknown = (input.sources ?? []).filter((source) => !known.includes(source));
      // A source nobody reads is no fault to retry: the run ends with the reason.
      if (unknown.length > 0)
        throw ApplicationFailure.nonRetryable(
          `no reconciliation source ${unknown.join(', ')}: the sources are ${known.join(', ')}`,
        );
      const sources = input.sources?.length ? input.sources : known;
      const window = await beating(() =>
        planRun(
          deps.db,
          {
            id: input.runId,
            trigger: input.trigger,
            sources,
            lagMs: deps.lagMs,
            ...(input.since ? { since: input.since } : {}),
            ...(input.until ? { until: input.until } : {}),
          },
          sources.includes('chain')
            ? {
                cutOffs: () => chainCutOffs(deps.db),
                firstBlock: (id, cutOff) => firstBlockOf(deps.db, id, cutOff),
                blocksPerRun: CHAIN_BLOCKS_PER_RUN,
              }
            : undefined,
        ),
      );
      return { window, sources };
    },

    async reconcileSource(input: { runId: string; source: string; window: Window }): Promise<Recorded> {
      const leg = legs().find((l) => l.source === input.source);
      if (!leg) throw ApplicationFailure.nonRetryable(`no reconciliation source ${input.source}`);
      return beating(() => reconcileSource(deps.db, leg, { id: input.runId, window: input.window }));
    },

    async finishReconciliation(input: { runId: string; summary: Record<string, unknown> }): Promise<void> {
      await beating(() => finishRun(deps.db, input.runId, input.summary));
    },
  };
}
