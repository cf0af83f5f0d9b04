import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { MODES, TRANSACTION_KINDS } from '../../lib/vocabulary';

export const merchants = pgTable('merchants', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /**
   * The merchant's first webhook secret, as processes of the release before `webhook_secrets` read it:
   * written for them during a rolling deploy, read by nothing here. A later release drops it.
   */
  webhookSecretEnc: text('webhook_secret_enc').notNull(),
  /**
   * Crypto settlement tolerance as a fiat amount (major units of the transaction's currency), converted at
   * the transaction's locked rate; a per-asset tolerance in `crypto_tolerances` takes precedence.
   */
  cryptoToleranceFiat: numeric('crypto_tolerance_fiat', { precision: 38, scale: 18 }),
  /** `keep` or `refund` the excess of an OVERPAID deposit. */
  overpaidPolicy: text('overpaid_policy').notNull().default('keep'),
  /** `fail` (refund the deposit) or `accept` the partial amount of an UNDERPAID deposit. */
  underpaidPolicy: text('underpaid_policy').notNull().default('fail'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** Secret keys are stored only as SHA-256 hashes; `expires_at` is set when a rotation retires a key. */
export const secretKeys = pgTable(
  'secret_keys',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    merchantId: text('merchant_id')
      .notNull()
      .references(() => merchants.id),
    mode: text('mode', { enum: MODES }).notNull(),
    keyHash: text('key_hash').notNull().unique(),
    /** First characters of the key, to tell keys apart in listings without revealing them. */
    keyPrefix: text('key_prefix').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
  },
  (t) => [index('secret_keys_merchant_idx').on(t.merchantId, t.mode)],
);

/** Envelope keys, encrypted with the master key. Several may be valid during a rotation overlap. */
export const encryptionKeys = pgTable(
  'encryption_keys',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    merchantId: text('merchant_id')
      .notNull()
      .references(() => merchants.id),
    keyEnc: text('key_enc').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
  },
  (t) => [index('encryption_keys_merchant_idx').on(t.merchantId)],
);

/**
 * Webhook signing secrets, encrypted with the master key (docs/webhooks.md). A rotation retires the valid
 * ones at the end of its overlap (`expires_at`) and adds the new one: in between, webhooks carry a
 * signature by each.
 */
export const webhookSecrets = pgTable(
  'webhook_secrets',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    merchantId: text('merchant_id')
      .notNull()
      .references(() => merchants.id),
    secretEnc: text('secret_enc').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
  },
  (t) => [index('webhook_secrets_merchant_idx').on(t.merchantId)],
);

export const terminals = pgTable(
  'terminals',
  {
    id: text('id').primaryKey(),
    merchantId: text('merchant_id')
      .notNull()
      .references(() => merchants.id),
    mode: text('mode', { enum: MODES }).notNull(),
    connector: text('connector').notNull(),
    kinds: text('kinds').array().notNull(),
    priority: integer('priority').notNull().default(100),
    descriptor: text('descriptor'),
    /** The connector's credentials for this terminal (JSON), encrypted with the master key; null for sandboxes. */
    credentialsEnc: text('credentials_enc'),
    active: boolean('active').notNull().default(true),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('terminals_merchant_idx').on(t.merchantId, t.mode)],
);

export const auditLog = pgTable('audit_log', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  merchantId: text('merchant_id'),
  action: text('action').notNull(),
  details: jsonb('details')
    .notNull()
    .default(sql`'{}'::jsonb`),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * A merchant's fee schedule: per mode, transaction kind and currency, a percentage of the amount (rounded
 * up to the minor unit) plus a fixed fee in minor units. No row means no fee. Set with
 * `npx payments merchants fees`; a payout reserves its amount plus its fee.
 */
export const merchantFees = pgTable(
  'merchant_fees',
  {
    merchantId: text('merchant_id')
      .notNull()
      .references(() => merchants.id),
    mode: text('mode', { enum: MODES }).notNull(),
    kind: text('kind', { enum: TRANSACTION_KINDS }).notNull(),
    currency: text('currency').notNull(),
    /** Percent of the amount, exact: `1.5` is 1.5 %. */
    percent: numeric('percent', { precision: 9, scale: 4 }).notNull().default('0'),
    fixedMinor: bigint('fixed_minor', { mode: 'bigint' })
      .notNull()
      .default(sql`0`),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.merchantId, t.mode, t.kind, t.currency] })],
);
