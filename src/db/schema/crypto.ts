import { bigserial, numeric, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/** Deposits seen on chain for a crypto transaction; one row per transaction hash, so a repeat adds nothing. */
export const cryptoDeposits = pgTable(
  'crypto_deposits',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    transactionId: text('transaction_id').notNull(),
    txHash: text('tx_hash').notNull(),
    /** Crypto units, exact. */
    amount: numeric('amount', { precision: 38, scale: 18 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('crypto_deposits_tx_hash_idx').on(t.transactionId, t.txHash)],
);
