import { sql } from 'drizzle-orm';
import { bigint, bigserial, check, index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { LEDGER_STEPS, MODES } from '../../lib/vocabulary';
import { merchants } from './merchants';

/** `available` is the sum of the wallet's ledger entries, kept in step inside the same database transaction. */
export const wallets = pgTable(
  'wallets',
  {
    id: text('id').primaryKey(),
    merchantId: text('merchant_id')
      .notNull()
      .references(() => merchants.id),
    mode: text('mode', { enum: MODES }).notNull(),
    currency: text('currency').notNull(),
    available: bigint('available', { mode: 'bigint' })
      .notNull()
      .default(sql`0`),
    status: text('status', { enum: ['Active', 'Inactive'] })
      .notNull()
      .default('Active'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('wallets_merchant_idx').on(t.merchantId, t.mode),
    check('wallets_available_nonnegative', sql`${t.available} >= 0`),
  ],
);

/** Append-only. One entry per (reference, step): a retried step can never apply twice. */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    walletId: text('wallet_id')
      .notNull()
      .references(() => wallets.id),
    /** A transaction id, or an operator reference such as `credit_...`. */
    reference: text('reference').notNull(),
    step: text('step', { enum: LEDGER_STEPS }).notNull(),
    /**
     * Signed minor units: credits and releases add, reserves subtract, settles record the final debit,
     * refunds and chargebacks take a payin's credit back.
     */
    amount: bigint('amount', { mode: 'bigint' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('ledger_entries_reference_step_idx').on(t.walletId, t.reference, t.step),
    // The wallet-transactions list's keyset: newest first, the id breaking ties.
    index('ledger_entries_wallet_time_idx').on(t.walletId, t.createdAt, t.id),
    // Reconciliation: a transaction's steps in every wallet, and the entries of a window.
    index('ledger_entries_reference_idx').on(t.reference),
    index('ledger_entries_created_idx').on(t.createdAt),
  ],
);
