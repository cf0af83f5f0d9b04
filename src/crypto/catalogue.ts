import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { cryptoAssets, fiatRates } from '../db/schema/index';

export type CryptoAsset = typeof cryptoAssets.$inferSelect;

/** Catalogue entries offered in `country` for a fiat `amount` (exact decimal text), grouped by code. */
export async function listPayinCurrencies(
  db: Db,
  country: string,
  amount: string,
): Promise<{ code: string; networks: string[] }[]> {
  const rows = await db
    .select({ code: cryptoAssets.code, network: cryptoAssets.network })
    .from(cryptoAssets)
    .where(
      and(
        eq(cryptoAssets.active, true),
        sql`(${cryptoAssets.allowedCountries} is null or ${country} = any(${cryptoAssets.allowedCountries}))`,
        sql`not (${country} = any(${cryptoAssets.blockedCountries}))`,
        sql`${amount}::numeric between ${cryptoAssets.minAmount} and ${cryptoAssets.maxAmount}`,
      ),
    )
    .orderBy(asc(cryptoAssets.sortOrder), asc(cryptoAssets.code));
  const grouped = new Map<string, string[]>();
  for (const row of rows) {
    const networks = grouped.get(row.code) ?? [];
    networks.push(row.network);
    grouped.set(row.code, networks);
  }
  return [...grouped].map(([code, networks]) => ({ code, networks }));
}

export async function findCryptoAsset(
  db: Db,
  code: string,
  network: string,
): Promise<CryptoAsset | undefined> {
  const [row] = await db
    .select()
    .from(cryptoAssets)
    .where(
      and(eq(cryptoAssets.code, code), eq(cryptoAssets.network, network), eq(cryptoAssets.active, true)),
    );
  return row;
}

export async function networksOf(db: Db, code: string): Promise<string[]> {
  const rows = await db
    .select({ network: cryptoAssets.network })
    .from(cryptoAssets)
    .where(and(eq(cryptoAssets.code, code), eq(cryptoAssets.active, true)));
  return rows.map((r) => r.network);
}

export async function fiatUsdRate(db: Db, currency: string): Promise<string | undefined> {
  const [row] = await db.select().from(fiatRates).where(eq(fiatRates.currency, currency));
  return row?.usdRate;
}
