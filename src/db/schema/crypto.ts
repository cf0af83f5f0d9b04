import { bigserial, boolean, numeric, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

export const depositDispositions = ['counted', 'refunded', 'held'] as const;
export type DepositDisposition = (typeof depositDispositions)[number];

/**
 * Deposits seen on chain for a crypto transaction, one row per transaction hash, each accounted exactly
 * once: kept as part of the payment (`counted`), `refunded` to its sender, or `held` for ops with a
 * `reason`. `counted_in_payment` says whether it arrived in time to count towards the paid amount (a
 * counted deposit may still be refunded when the payment fails). A counted deposit may have a part of it
 * refunded or held: the excess of an overpayment. What stays is `amount - refund_amount - held_amount`.
 */
export const cryptoDeposits = pgTable(
  'crypto_deposits',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    transactionId: text('transaction_id').notNull(),
    txHash: text('tx_hash').notNull(),
    /** Crypto units, exact. */
    amount: numeric('amount', { precision: 38, scale: 18 }).notNull(),
    /** The sending address, where a refund goes. */
    sender: text('sender'),
    disposition: text('disposition', { enum: depositDispositions }).notNull().default('counted'),
    countedInPayment: boolean('counted_in_payment').notNull().default(false),
    /** Why the deposit was refunded or held. */
    reason: text('reason'),
    /** Crypto sent back for this deposit: all of it, or the excess of an overpayment. */
    refundAmount: numeric('refund_amount', { precision: 38, scale: 18 }),
    refundTxHash: text('refund_tx_hash'),
    /** Crypto of this deposit held for ops (no sender to refund to): all of it, or an excess. */
    heldAmount: numeric('held_amount', { precision: 38, scale: 18 }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('crypto_deposits_tx_hash_idx').on(t.transactionId, t.txHash)],
);

/** A merchant's settlement tolerance for one crypto asset, in that asset's units. */
export const cryptoTolerances = pgTable(
  'crypto_tolerances',
  {
    merchantId: text('merchant_id').notNull(),
    cryptoCurrency: text('crypto_currency').notNull(),
    tolerance: numeric('tolerance', { precision: 38, scale: 18 }).notNull(),
  },
  (t) => [uniqueIndex('crypto_tolerances_asset_idx').on(t.merchantId, t.cryptoCurrency)],
);
