import { boolean, doublePrecision, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Token buckets shared by every API process (not money: tokens may be fractional). */
export const rateLimitBuckets = pgTable('rate_limit_buckets', {
  key: text('key').primaryKey(),
  tokens: doublePrecision('tokens').notNull(),
  /** Whether the last request taken against this bucket was let through. */
  allowed: boolean('allowed').notNull(),
  /** Tokens the last claim handed to an API process, which spends them locally (src/api/rate-limit.ts). */
  granted: integer('granted').notNull().default(1),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
});
