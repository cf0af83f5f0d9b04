import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { preparedOnce } from '../db/prepared';
import { wallets } from '../db/schema/index';
import type { Mode } from '../lib/vocabulary';

export type WalletRow = typeof wallets.$inferSelect;

interface Scope {
  merchantId: string;
  mode: Mode;
}

/** The merchant's wallets of one mode, by currency. */
export async function listWallets(db: Db, merchant: Scope): Promise<WalletRow[]> {
  return db
    .select()
    .from(wallets)
    .where(and(eq(wallets.merchantId, merchant.merchantId), eq(wallets.mode, merchant.mode)))
    .orderBy(asc(wallets.currency), asc(wallets.createdAt));
}

/** The merchant's wallet of this mode in a currency (the first one opened, when there are several). */
export async function findWalletFor(
  db: Db,
  merchant: Scope,
  currency: string,
): Promise<WalletRow | undefined> {
  const find = preparedOnce(db, 'find_wallet_for', () =>
    db
      .select()
      .from(wallets)
      .where(
        and(
          eq(wallets.merchantId, sql.placeholder('merchantId')),
          eq(wallets.mode, sql.placeholder('mode')),
          eq(wallets.currency, sql.placeholder('currency')),
        ),
      )
      .orderBy(asc(wallets.createdAt))
      .limit(1)
      .prepare('find_wallet_for'),
  );
  const [wallet] = await find.execute({ merchantId: merchant.merchantId, mode: merchant.mode, currency });
  return wallet;
}
