import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { MODES, TRANSACTION_KINDS, TRANSACTION_STATUSES } from '../../lib/vocabulary';
import { merchants } from './merchants';

/**
 * One row per transaction: the `order_id` claim made by the API, then the projection of its workflow's
 * state. `version` only grows, so a late or replayed write never moves a transaction backwards.
 */
export const transactions = pgTable(
  'transactions',
  {
    id: text('id').primaryKey(),
    merchantId: text('merchant_id')
      .notNull()
      .references(() => merchants.id),
    mode: text('mode', { enum: MODES }).notNull(),
    kind: text('kind', { enum: TRANSACTION_KINDS }).notNull(),
    orderId: text('order_id'),
    /** Keyed digest of the create request, to tell a replay from a conflicting reuse of `order_id`. */
    requestHash: text('request_hash').notNull(),
    status: text('status', { enum: TRANSACTION_STATUSES }).notNull().default('PENDING'),
    message: text('message').notNull(),
    version: integer('version').notNull().default(0),
    /** Minor units for card and payout; null for crypto kinds, whose amounts are exact decimals. */
    amountMinor: bigint('amount_minor', { mode: 'bigint' }),
    amountDecimal: numeric('amount_decimal', { precision: 38, scale: 18 }),
    currency: text('currency').notNull(),
    customer: jsonb('customer').$type<{ first_name: string; last_name: string; email: string }>().notNull(),
    /** Hosted page the customer is sent to, when the transaction needs one. */
    redirectUrl: text('redirect_url'),
    merchantRedirectUrl: text('merchant_redirect_url'),
    webhookUrl: text('webhook_url'),
    terminalId: text('terminal_id'),
    /** The acquirer's own reference for the card payment it authorized (a refund names it). */
    acquirerReference: text('acquirer_reference'),
    descriptor: text('descriptor'),
    cardBin: text('card_bin'),
    cardLast4: text('card_last4'),
    cardFingerprint: text('card_fingerprint'),
    walletId: text('wallet_id'),
    /** The customer's country as the create request gave it (alpha-2 or alpha-3); null before it was kept. */
    country: text('country'),
    refunded: boolean('refunded').notNull().default(false),
    refundedAt: timestamp('refunded_at', { withTimezone: true }),
    /** The acquirer's reference for a card payment's refund. */
    refundReference: text('refund_reference'),
    /** The payment link the customer paid through (docs/hosted.md), when one created the transaction. */
    paymentLinkId: text('payment_link_id'),
    chargeback: boolean('chargeback').notNull().default(false),
    chargebackAt: timestamp('chargeback_at', { withTimezone: true }),
    /** Kind-specific fields (ramp quote, crypto settlement...), exact decimals as strings. */
    details: jsonb('details')
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    /**
     * The input the API started the transaction's workflow with: a run is the service's only with this
     * input (docs/operations.md, what binds a run). Null in rows from before it was kept.
     */
    workflowInput: jsonb('workflow_input').$type<Record<string, unknown>>(),
    /**
     * The run chain (its first run's id) of the workflow the service started, bound at its first step; only
     * runs of that chain (the run itself, or a Reset of it by ops) may act for the transaction. `legacy`:
     * final before runs were bound, so no run may act any more.
     */
    runChain: text('run_chain'),
    /** The run of that chain that acts now: the first, or the latest Reset's. */
    runId: text('run_id'),
    /** The run that wrote `status`: a final status one run wrote, no other run changes. */
    statusRunId: text('status_run_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('transactions_order_idx')
      .on(t.merchantId, t.mode, t.orderId)
      .where(sql`${t.orderId} is not null`),
    // A merchant's transactions by time; the lists' keyset (newest first, the id breaking ties).
    index('transactions_list_idx').on(t.merchantId, t.mode, t.createdAt, t.id),
    index('transactions_fingerprint_idx').on(t.merchantId, t.cardFingerprint),
    // Reconciliation: what changed in a window, and what is still waiting.
    index('transactions_updated_idx').on(t.updatedAt),
    index('transactions_waiting_idx')
      .on(t.createdAt)
      .where(sql`${t.status} in ('PENDING', 'REDIRECT')`),
  ],
);

/**
 * A create's `Idempotency-Key` (docs/api.md): the same key with the same request answers the transaction
 * the first one made; with another request it is refused. Kept per merchant and mode, claimed in the same
 * database transaction as the transaction it names; removed after `IDEMPOTENCY_KEY_HOURS`.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    merchantId: text('merchant_id')
      .notNull()
      .references(() => merchants.id),
    mode: text('mode', { enum: MODES }).notNull(),
    key: text('key').notNull(),
    /** The create request's keyed digest, as `transactions.request_hash`. */
    requestHash: text('request_hash').notNull(),
    transactionId: text('transaction_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.merchantId, t.mode, t.key] }),
    index('idempotency_keys_created_idx').on(t.createdAt),
  ],
);

/**
 * Card data a later step needs, encrypted with the master key. The CVV is removed as soon as authorization
 * is done or its hold expires; the number goes when the transaction no longer needs it, leaving the row as
 * a tombstone (`purged_at`) so nothing can vault that transaction's card again; the sweep removes it later.
 */
export const cardVault = pgTable('card_vault', {
  transactionId: text('transaction_id').primaryKey(),
  panEnc: text('pan_enc'),
  expiryEnc: text('expiry_enc'),
  cvvEnc: text('cvv_enc'),
  cvvExpiresAt: timestamp('cvv_expires_at', { withTimezone: true }),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  purgedAt: timestamp('purged_at', { withTimezone: true }),
  /**
   * The idempotency keys this card has been sent under: authorization keys for a card payment, payout keys
   * for a payout. A connector's refusal of a key's first send is definite; of a later one (the send is
   * repeated by a workflow task that was lost) it is not.
   */
  authorizationsSent: text('authorizations_sent')
    .array()
    .notNull()
    .default(sql`'{}'::text[]`),
  /**
   * When a payout's sends were closed (it ended without a send of its own: stopped, no terminal, an inactive
   * wallet, its window closed): a payout key is noted only while this is empty, and every reserve and send
   * follows its note, so an attempt that had not noted its key by then reserves and sends nothing.
   */
  sendsClosedAt: timestamp('sends_closed_at', { withTimezone: true }),
});
