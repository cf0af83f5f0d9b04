import { sql } from 'drizzle-orm';
import { bigserial, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

export const BREAK_STATES = ['open', 'acknowledged', 'resolved', 'accepted'] as const;
export type BreakState = (typeof BREAK_STATES)[number];

/**
 * One reconciliation run: a window of time read by each of its sources (docs/reconciliation.md). The next
 * scheduled run starts where the latest finished one ended, so every moment is read by one scheduled run.
 */
export const reconciliationRuns = pgTable(
  'reconciliation_runs',
  {
    /** The Temporal workflow id of the run. */
    id: text('id').primaryKey(),
    /** `schedule`, or the actor who asked for it (`npx payments recon run`). */
    trigger: text('trigger').notNull(),
    /** The sources it read, comma-separated. */
    sources: text('sources').notNull(),
    windowStart: timestamp('window_start', { withTimezone: true }).notNull(),
    /** The cut-off: what happened after it is the next run's. */
    windowEnd: timestamp('window_end', { withTimezone: true }).notNull(),
    state: text('state', { enum: ['running', 'finished'] })
      .notNull()
      .default('running'),
    /**
     * Each watched chain node's blocks the run reads (both ends included), by node id: from the previous
     * scheduled run's cut-off to the last block the node's watcher had read when the run was planned.
     */
    blocks: jsonb('blocks')
      .$type<Record<string, { from: string; to: string }>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    /** Per source: what was checked, breaks found, breaks resolved. */
    summary: jsonb('summary')
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [index('reconciliation_runs_window_idx').on(t.trigger, t.windowEnd)],
);

/**
 * A difference reconciliation found between the ledger and a source (itself, a processor's books, a chain).
 * The same difference found again is the same row: (source, reference, kind) is unique. A break never moves
 * money; ops settle it (docs/reconciliation.md).
 */
export const reconciliationBreaks = pgTable(
  'reconciliation_breaks',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** `ledger`, `sandbox` (the sandbox processors' books), `stripe`, or a chain network. */
    source: text('source').notNull(),
    /** What the break is about: a transaction id, a wallet id, a ledger entry, a processor's key. */
    reference: text('reference').notNull(),
    kind: text('kind').notNull(),
    transactionId: text('transaction_id'),
    merchantId: text('merchant_id'),
    mode: text('mode'),
    /** What the ledger says and what the source says, as found by the latest run that saw it. */
    expected: text('expected'),
    observed: text('observed'),
    message: text('message').notNull(),
    state: text('state', { enum: BREAK_STATES }).notNull().default('open'),
    /** Set when ops accept it. */
    reason: text('reason'),
    firstSeenAt: timestamp('first_seen_at', { withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
    /** How many runs found it. */
    seen: integer('seen').notNull().default(1),
    lastRunId: text('last_run_id').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('reconciliation_breaks_key_idx').on(t.source, t.reference, t.kind),
    index('reconciliation_breaks_state_idx').on(t.state, t.kind),
    index('reconciliation_breaks_transaction_idx').on(t.transactionId),
  ],
);

/** Every change of a break's state, with who made it: a run (`recon:<run id>`) or ops. */
export const reconciliationBreakEvents = pgTable(
  'reconciliation_break_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    breakId: integer('break_id').notNull(),
    actor: text('actor').notNull(),
    /** `found`, `found again` (a settled break back), `acknowledged`, `resolved`, `accepted`. */
    action: text('action').notNull(),
    stateBefore: text('state_before'),
    stateAfter: text('state_after').notNull(),
    reason: text('reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('reconciliation_break_events_break_idx').on(t.breakId, t.createdAt)],
);
