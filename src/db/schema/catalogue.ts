import { boolean, integer, numeric, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';

/** Crypto currencies and networks offered for payins and ramps; seeded by a migration. */
export const cryptoAssets = pgTable(
  'crypto_assets',
  {
    code: text('code').notNull(),
    network: text('network').notNull(),
    decimals: integer('decimals').notNull(),
    /** What the currencies list shows: the currency's name and the ticker markets list it under. */
    name: text('name').notNull().default(''),
    symbol: text('symbol').notNull().default(''),
    /** Fiat amount limits (major units of the request's currency) for listing and payins. */
    minAmount: numeric('min_amount', { precision: 38, scale: 18 }).notNull(),
    maxAmount: numeric('max_amount', { precision: 38, scale: 18 }).notNull(),
    /** ISO alpha-2 codes; null means every country not blocked. */
    allowedCountries: text('allowed_countries').array(),
    blockedCountries: text('blocked_countries').array().notNull(),
    /** Sandbox price of one unit in USD. */
    usdRate: numeric('usd_rate', { precision: 38, scale: 18 }).notNull(),
    active: boolean('active').notNull().default(true),
    sortOrder: integer('sort_order').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.code, t.network] })],
);

/** Sandbox fiat rates: USD per one unit of the currency. */
export const fiatRates = pgTable('fiat_rates', {
  currency: text('currency').primaryKey(),
  usdRate: numeric('usd_rate', { precision: 38, scale: 18 }).notNull(),
});
