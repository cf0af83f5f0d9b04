import { and, eq, notInArray } from 'drizzle-orm';
import type { Db, Tx } from '../db/client';
import { auditLog, cryptoTolerances, merchants } from '../db/schema/index';
import { canonicalDecimal } from '../lib/units';

/** A merchant's crypto settlement settings, as an operator sets and reads them. */
export interface SettlementSettings {
  /** Per crypto currency, in that currency's units. */
  tolerances: Record<string, string>;
  /** One fiat amount (major units of the transaction's currency) converted at the locked rate. */
  tolerance_fiat: string | null;
  underpaid: 'fail' | 'accept';
  overpaid: 'keep' | 'refund';
}

export interface SettlementChange {
  /** Replaces the per-currency tolerances when given. */
  tolerances?: Record<string, string>;
  toleranceFiat?: string | null;
  underpaid?: 'fail' | 'accept';
  overpaid?: 'keep' | 'refund';
}

export class SettingsError extends Error {}

function decimal(value: string, what: string): string {
  const canonical = canonicalDecimal(value);
  if (canonical === undefined)
    throw new SettingsError(`${what} must be a non-negative decimal, got "${value}"`);
  return canonical;
}

/** Changes a merchant's settlement settings and records the change in the audit log, in one transaction. */
export async function changeSettlementSettings(
  db: Db,
  merchantId: string,
  change: SettlementChange,
): Promise<SettlementSettings> {
  return db.transaction(async (tx) => {
    const [merchant] = await tx.select().from(merchants).where(eq(merchants.id, merchantId)).for('update');
    if (!merchant) throw new SettingsError(`Merchant ${merchantId} not found.`);
    const set: Partial<typeof merchants.$inferInsert> = {};
    if (change.toleranceFiat !== undefined)
      set.cryptoToleranceFiat =
        change.toleranceFiat === null ? null : decimal(change.toleranceFiat, '--tolerance-fiat');
    if (change.underpaid) set.underpaidPolicy = change.underpaid;
    if (change.overpaid) set.overpaidPolicy = change.overpaid;
    if (Object.keys(set).length > 0) await tx.update(merchants).set(set).where(eq(merchants.id, merchantId));
    if (change.tolerances) {
      const entries = Object.entries(change.tolerances).map(([code, value]) => ({
        merchantId,
        cryptoCurrency: code.toUpperCase(),
        tolerance: decimal(value, `--tolerance ${code}`),
      }));
      const codes = entries.map((e) => e.cryptoCurrency);
      await tx
        .delete(cryptoTolerances)
        .where(
          and(
            eq(cryptoTolerances.merchantId, merchantId),
            codes.length > 0 ? notInArray(cryptoTolerances.cryptoCurrency, codes) : undefined,
          ),
        );
      for (const entry of entries) {
        await tx
          .insert(cryptoTolerances)
          .values(entry)
          .onConflictDoUpdate({
            target: [cryptoTolerances.merchantId, cryptoTolerances.cryptoCurrency],
            set: { tolerance: entry.tolerance },
          });
      }
    }
    const after = await readSettlementSettings(tx, merchantId);
    await tx.insert(auditLog).values({
      merchantId,
      action: 'merchant.settlement_settings_changed',
      details: { ...after },
    });
    return after;
  });
}

export async function readSettlementSettings(db: Db | Tx, merchantId: string): Promise<SettlementSettings> {
  const [merchant] = await db.select().from(merchants).where(eq(merchants.id, merchantId));
  if (!merchant) throw new SettingsError(`Merchant ${merchantId} not found.`);
  const tolerances = await db
    .select()
    .from(cryptoTolerances)
    .where(eq(cryptoTolerances.merchantId, merchantId))
    .orderBy(cryptoTolerances.cryptoCurrency);
  return {
    tolerances: Object.fromEntries(tolerances.map((t) => [t.cryptoCurrency, canonicalDecimal(t.tolerance)!])),
    tolerance_fiat:
      merchant.cryptoToleranceFiat === null ? null : canonicalDecimal(merchant.cryptoToleranceFiat)!,
    underpaid: merchant.underpaidPolicy === 'accept' ? 'accept' : 'fail',
    overpaid: merchant.overpaidPolicy === 'refund' ? 'refund' : 'keep',
  };
}
