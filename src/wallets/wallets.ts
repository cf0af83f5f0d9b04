import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { wallets } from '../db/schema/index';
import type { Mode } from '../lib/vocabulary';
import { feeFor } from '../merchants/fees';
import { fieldError } from '../platform/errors';

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

/** One of the merchant's wallets of this mode, by id. */
export async function findWallet(db: Db, merchant: Scope, walletId: string): Promise<WalletRow | undefined> {
  const [wallet] = await db
    .select()
    .from(wallets)
    .where(
      and(
        eq(wallets.id, walletId),
        eq(wallets.merchantId, merchant.merchantId),
        eq(wallets.mode, merchant.mode),
      ),
    );
  return wallet;
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

/**
 * What a payout of `amount` (minor units) would take from a wallet: the amount plus the merchant's payout
 * fee, and the wallet's available balance. The wallet must be one of the merchant's of this mode.
 */
export async function estimatePayout(
  db: Db,
  merchant: Scope,
  request: { wallet_id: string; amount: bigint },
): Promise<{ required: bigint; fee: bigint; balance: bigint }> {
  const wallet = await findWallet(db, merchant, request.wallet_id);
  if (!wallet) fieldError('wallet_id', 'The selected wallet id is invalid.');
  const fee = await feeFor(db, merchant, 'payout', wallet.currency, request.amount);
  return { required: request.amount + fee, fee, balance: wallet.available };
}
