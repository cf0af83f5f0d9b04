import { bigint, index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * What the sandbox connectors have done, by the idempotency key each request carried: the sandbox's own
 * records, as a real processor keeps them, so a retried request answers the same and a lost answer can be
 * asked for afterwards. Shared by every worker process.
 */
export const sandboxOperations = pgTable(
  'sandbox_operations',
  {
    idempotencyKey: text('idempotency_key').primaryKey(),
    /** The transaction the request was for: what the key names before its first colon. */
    transactionId: text('transaction_id'),
    connector: text('connector').notNull(),
    /** `authorization` or `payout`. */
    operation: text('operation').notNull(),
    /** approved, challenge, declined (authorizations); paid, verification, declined (payouts). */
    state: text('state').notNull(),
    reference: text('reference').notNull(),
    message: text('message'),
    /** What the request moved, in minor units, and its currency: what reconciliation matches the ledger with. */
    amountMinor: bigint('amount_minor', { mode: 'bigint' }),
    currency: text('currency'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('sandbox_operations_transaction_idx').on(t.transactionId),
    index('sandbox_operations_updated_idx').on(t.updatedAt),
  ],
);
