import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { preparedOnce } from '../db/prepared';
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
  // Prepared once: read on every deposit and send, its building cost more than its round trip.
  const find = preparedOnce(db, 'find_crypto_asset', () =>
    db
      .select()
      .from(cryptoAssets)
      .where(
        and(
          eq(cryptoAssets.code, sql.placeholder('code')),
          eq(cryptoAssets.network, sql.placeholder('network')),
          eq(cryptoAssets.active, true),
        ),
      )
      .prepare('find_crypto_asset'),
  );
  const [row] = await find.execute({ code, network });
  return row;
}

/** The networks a currency code is offered on, in the catalogue's order. */
export async function networksOf(db: Db, code: string): Promise<string[]> {
  return (await activeAssetsOf(db, code)).map((asset) => asset.network);
}

/** Every active asset of a currency code, one per network, by the catalogue's order, then network. */
export async function activeAssetsOf(db: Db, code: string): Promise<CryptoAsset[]> {
  const assets = preparedOnce(db, 'active_assets_of', () =>
    db
      .select()
      .from(cryptoAssets)
      .where(and(eq(cryptoAssets.code, sql.placeholder('code')), eq(cryptoAssets.active, true)))
      .orderBy(asc(cryptoAssets.sortOrder), asc(cryptoAssets.network))
      .prepare('active_assets_of'),
  );
  return assets.execute({ code });
}

export async function fiatUsdRate(db: Db, currency: string): Promise<string | undefined> {
  const rate = preparedOnce(db, 'fiat_usd_rate', () =>
    db
      .select({ usdRate: fiatRates.usdRate })
      .from(fiatRates)
      .where(eq(fiatRates.currency, sql.placeholder('currency')))
      .prepare('fiat_usd_rate'),
  );
  const [row] = await rate.execute({ currency });
  return row?.usdRate;
}
