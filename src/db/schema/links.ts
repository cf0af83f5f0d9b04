import { sql } from 'drizzle-orm';
import { bigint, index, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { MODES } from '../../lib/vocabulary';
import { merchants } from './merchants';

/**
 * A merchant's payment page template (docs/hosted.md, payment links): where its links send the customer
 * back and notify, per mode. Added with `npx payments templates add`.
 */
export const paymentTemplates = pgTable(
  'payment_templates',
  {
    /** The id links are created with (`payment_template_id`). */
    id: text('id').primaryKey(),
    merchantId: text('merchant_id')
      .notNull()
      .references(() => merchants.id),
    mode: text('mode', { enum: MODES }).notNull(),
    /** The page layout the template uses (`template_id`); `standard` is the one there is. */
    layout: text('layout').notNull().default('standard'),
    name: text('name').notNull(),
    screenshotUrl: text('screenshot_url'),
    redirectUrl: text('redirect_url').notNull(),
    webhookUrl: text('webhook_url'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('payment_templates_merchant_idx').on(t.merchantId, t.mode)],
);

/** What a crypto payment link fixes of the ramp or payin it creates. */
export interface CryptoLinkTerms {
  transaction_type: 'ONRAMP' | 'OFFRAMP' | 'PAYIN';
  fiat_currency: string;
  crypto_currency: string;
  /** Left to the customer when absent and the currency is on several networks. */
  crypto_network?: string;
  fiat_amount?: string;
  crypto_amount?: string;
}

/**
 * A payment link: open until a customer pays through it once, or until `expires_at`. Its workflow
 * (`paymentLink`) holds it open and closes it; `status` and `transaction_id` are its projection.
 */
export const paymentLinks = pgTable(
  'payment_links',
  {
    id: text('id').primaryKey(),
    merchantId: text('merchant_id')
      .notNull()
      .references(() => merchants.id),
    mode: text('mode', { enum: MODES }).notNull(),
    templateId: text('template_id')
      .notNull()
      .references(() => paymentTemplates.id),
    /** `card` (`POST /api/v1/payment-link`) or `crypto` (`POST /api/v1/crypto/payment-link`). */
    kind: text('kind', { enum: ['card', 'crypto'] })
      .notNull()
      .default('card'),
    /** A crypto link's transaction: type, currencies and the one amount it fixes (exact decimals). */
    crypto: jsonb('crypto').$type<CryptoLinkTerms>(),
    /** A fixed amount in minor units and its currency, or null: the customer enters them. */
    amountMinor: bigint('amount_minor', { mode: 'bigint' }),
    currency: text('currency'),
    orderId: text('order_id'),
    terminalId: text('terminal_id'),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    status: text('status', { enum: ['open', 'used', 'expired'] })
      .notNull()
      .default('open'),
    /** The transaction the link created, once used. */
    transactionId: text('transaction_id'),
    /** The link workflow's run chain and acting run, bound at its first step (as `transactions.run_chain`). */
    runChain: text('run_chain'),
    runId: text('run_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('payment_links_merchant_idx').on(t.merchantId, t.mode, t.createdAt),
    // A link's order id becomes its transaction's: one link per order id.
    uniqueIndex('payment_links_order_idx')
      .on(t.merchantId, t.mode, t.orderId)
      .where(sql`${t.orderId} is not null`),
  ],
);
