import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { preparedOnce } from '../db/prepared';
import { merchantFees, wallets } from '../db/schema/index';
import type { WalletRow } from '../wallets/wallets';
import { parseUnits } from '../lib/units';
import type { Mode, TransactionKind } from '../lib/vocabulary';

/** One line of a merchant's fee schedule (`merchant_fees`). */
export interface FeeRule {
  merchantId: string;
  mode: Mode;
  kind: TransactionKind;
  currency: string;
  /** Percent of the amount, exact decimal text: `1.5` is 1.5 %. */
  percent: string;
  fixedMinor: bigint;
}

/** Ten-thousandths of a percent: the schedule keeps four decimals. */
const PERCENT_SCALE = 4;

/** The fee on an amount: the percentage rounded up to the minor unit, plus the fixed fee. Integers only. */
export function feeOf(amountMinor: bigint, rule: Pick<FeeRule, 'percent' | 'fixedMinor'>): bigint {
  const scaled = parseUnits(rule.percent, PERCENT_SCALE);
  if (scaled === undefined || scaled < 0n) throw new Error(`invalid fee percent ${rule.percent}`);
  const denominator = 100n * 10n ** BigInt(PERCENT_SCALE);
  const share = (amountMinor * scaled + denominator - 1n) / denominator;
  return share + rule.fixedMinor;
}

/**
 * One of the merchant's wallets of this mode, by id, and the merchant's payout fee on `amountMinor` in the
 * wallet's currency (zero without a line), in one read; undefined when the wallet is not the merchant's.
 */
export async function walletWithPayoutFee(
  db: Db,
  scope: { merchantId: string; mode: Mode },
  walletId: string,
  amountMinor: bigint,
): Promise<{ wallet: WalletRow; fee: bigint } | undefined> {
  // Prepared once: read on every payout create, its building cost more than its round trip.
  const read = preparedOnce(db, 'wallet_with_payout_fee', () =>
    db
      .select({ wallet: wallets, percent: merchantFees.percent, fixedMinor: merchantFees.fixedMinor })
      .from(wallets)
      .leftJoin(
        merchantFees,
        and(
          eq(merchantFees.merchantId, wallets.merchantId),
          eq(merchantFees.mode, wallets.mode),
          eq(merchantFees.kind, 'payout'),
          eq(merchantFees.currency, wallets.currency),
        ),
      )
      .where(
        and(
          eq(wallets.id, sql.placeholder('walletId')),
          eq(wallets.merchantId, sql.placeholder('merchantId')),
          eq(wallets.mode, sql.placeholder('mode')),
        ),
      )
      .prepare('wallet_with_payout_fee'),
  );
  const [row] = await read.execute({ walletId, merchantId: scope.merchantId, mode: scope.mode });
  if (!row) return undefined;
  const { wallet, percent, fixedMinor } = row;
  return {
    wallet,
    fee: percent !== null && fixedMinor !== null ? feeOf(amountMinor, { percent, fixedMinor }) : 0n,
  };
}

/**
 * Sets one line of the schedule. A new line takes zero for what is not given; an existing one keeps it,
 * so changing the percentage leaves the fixed fee as it was.
 */
export async function setFee(
  db: Db,
  rule: Omit<FeeRule, 'percent' | 'fixedMinor'> & Partial<Pick<FeeRule, 'percent' | 'fixedMinor'>>,
): Promise<void> {
  const changed = {
    ...(rule.percent === undefined ? {} : { percent: rule.percent }),
    ...(rule.fixedMinor === undefined ? {} : { fixedMinor: rule.fixedMinor }),
  };
  await db
    .insert(merchantFees)
    .values({ ...rule, percent: rule.percent ?? '0', fixedMinor: rule.fixedMinor ?? 0n })
    .onConflictDoUpdate({
      target: [merchantFees.merchantId, merchantFees.mode, merchantFees.kind, merchantFees.currency],
      set: { ...changed, updatedAt: sql`now()` },
    });
}

/** The merchant's whole schedule. */
export async function listFees(db: Db, merchantId: string): Promise<FeeRule[]> {
  const rows = await db.select().from(merchantFees).where(eq(merchantFees.merchantId, merchantId));
  return rows.map(({ updatedAt: _updatedAt, ...rule }) => rule);
}
