import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { chainNodes, cryptoAssets, fiatRates } from '../db/schema/index';
import { LIVE_REFUSED_NETWORKS, nodeWatchesCurrency } from './networks';

export type CryptoAsset = typeof cryptoAssets.$inferSelect;

/**
 * Catalogue entries offered in `country` for a fiat `amount` (exact decimal text), grouped by code. In
 * live mode only what a live payin takes (docs/connectors.md): never OMNI, and unless the sandbox chain
 * may stand in (`sandboxInLive`), only assets a live node watches.
 */
export async function listPayinCurrencies(
  db: Db,
  country: string,
  amount: string,
  live?: { sandboxInLive: boolean },
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
  const watched =
    live && !live.sandboxInLive
      ? new Set(
          (
            await db
              .selectDistinct({ network: chainNodes.network })
              .from(chainNodes)
              .where(and(eq(chainNodes.mode, 'live'), eq(chainNodes.active, true)))
          ).map((n) => n.network),
        )
      : undefined;
  const offered = rows.filter(
    (row) =>
      !live ||
      (!LIVE_REFUSED_NETWORKS.has(row.network) &&
        (!watched || (watched.has(row.network) && nodeWatchesCurrency(row.network, row.code)))),
  );
  const grouped = new Map<string, { code: string; name: string; symbol: string; networks: string[] }>();
  for (const row of offered) {
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

/** The networks a currency code is offered on, in the catalogue's order. */
export async function networksOf(db: Db, code: string): Promise<string[]> {
  return (await activeAssetsOf(db, code)).map((asset) => asset.network);
}

/** Every active asset of a currency code, one per network, by the catalogue's order, then network. */
export async function activeAssetsOf(db: Db, code: string): Promise<CryptoAsset[]> {
  return db
    .select()
    .from(cryptoAssets)
    .where(and(eq(cryptoAssets.code, code), eq(cryptoAssets.active, true)))
    .orderBy(asc(cryptoAssets.sortOrder), asc(cryptoAssets.network));
}

export async function fiatUsdRate(db: Db, currency: string): Promise<string | undefined> {
  const [row] = await db.select().from(fiatRates).where(eq(fiatRates.currency, currency));
  return row?.usdRate;
}
