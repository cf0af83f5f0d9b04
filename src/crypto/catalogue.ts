import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { cryptoAssets, fiatRates } from '../db/schema/index';

export type CryptoAsset = typeof cryptoAssets.$inferSelect;

/** Catalogue entries offered in `country` for a fiat `amount` (exact decimal text), grouped by code. */
export async function listPayinCurrencies(
  db: Db,
  country: string,
  amount: string,
): Promise<{ code: string; name: string; symbol: string; networks: string[] }[]> {
  const rows = await db
    .select({
      code: cryptoAssets.code,
      name: cryptoAssets.name,
      symbol: cryptoAssets.symbol,
      network: cryptoAssets.network,
    })
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
  const grouped = new Map<string, { code: string; name: string; symbol: string; networks: string[] }>();
  for (const row of rows) {
    const entry = grouped.get(row.code) ?? {
      code: row.code,
      name: row.name,
      symbol: row.symbol,
      networks: [],
    };
    entry.networks.push(row.network);
    grouped.set(row.code, entry);
  }
  return [...grouped.values()];
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
    .where(and(eq(cryptoAssets.code, code), eq(cryptoAssets.active, true)))
    .orderBy(asc(cryptoAssets.sortOrder), asc(cryptoAssets.network));
  return rows.map((r) => r.network);
}

export async function fiatUsdRate(db: Db, currency: string): Promise<string | undefined> {
  const [row] = await db.select().from(fiatRates).where(eq(fiatRates.currency, currency));
  return row?.usdRate;
}
