import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * What the sandbox connectors have done, by the idempotency key each request carried: the sandbox's own
 * records, as a real processor keeps them, so a retried request answers the same and a lost answer can be
 * asked for afterwards. Shared by every worker process.
 */
export const sandboxOperations = pgTable('sandbox_operations', {
  idempotencyKey: text('idempotency_key').primaryKey(),
  connector: text('connector').notNull(),
  /** `authorization` or `payout`. */
  operation: text('operation').notNull(),
  /** approved, challenge, declined (authorizations); paid, verification, declined (payouts). */
  state: text('state').notNull(),
  reference: text('reference').notNull(),
  message: text('message'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
