import { bigserial, index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/**
 * Every ops action on a transaction: who, what, why, the status before and after, when. Written in the
 * same step as the action's effect; `key` makes a retried write land once.
 */
export const opsActions = pgTable(
  'ops_actions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    transactionId: text('transaction_id').notNull(),
    key: text('key').notNull(),
    actor: text('actor').notNull(),
    /** `retryNow`, `forceFail`, `cancel`, `redeliverWebhooks` or `retryWebhook`. */
    action: text('action').notNull(),
    reason: text('reason'),
    statusBefore: text('status_before').notNull(),
    statusAfter: text('status_after').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('ops_actions_key_idx').on(t.transactionId, t.key),
    index('ops_actions_transaction_idx').on(t.transactionId, t.createdAt),
  ],
);

/**
 * A run of a transaction's aftercare workflow (refunds, chargebacks) the service starts: the API records
 * the ticket before the start, the run named by it claims the row at its first step, and only that run's
 * chain (or a Reset of it) may act. Each run is its own chain: a refund after the last run ended starts
 * another under the same workflow id.
 */
export const aftercareRuns = pgTable(
  'aftercare_runs',
  {
    ticket: text('ticket').primaryKey(),
    transactionId: text('transaction_id').notNull(),
    runChain: text('run_chain'),
    runId: text('run_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('aftercare_runs_run_idx').on(t.runId), index('aftercare_runs_chain_idx').on(t.runChain)],
);
