import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
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
  const [wallet] = await db
    .select()
    .from(wallets)
    .where(
      and(
        eq(wallets.merchantId, merchant.merchantId),
        eq(wallets.mode, merchant.mode),
        eq(wallets.currency, currency),
      ),
    )
    .orderBy(asc(wallets.createdAt))
    .limit(1);
  return wallet;
}
