/**
 * The wallet ledger (src/wallets/ledger.ts) against a test database, without Temporal: every step once,
 * never below zero, nothing new on an inactive wallet, and the balance always the sum of its entries,
 * also under steps racing each other.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { applyLedgerEntry, creditWallet } from '../../src/wallets/ledger';
import { ledgerEntries, wallets } from '../../src/db/schema/index';
import { createMerchant } from '../../src/merchants/accounts';
import { databaseForFile } from '../helpers/env';

const db = databaseForFile(8);

/** A new wallet holding `amount` minor units (credited through the ledger). */
async function walletWith(amount: bigint): Promise<string> {
  const merchant = await createMerchant(db().db, randomBytes(32).toString('hex'), {
    name: 'Ledger',
    wallets: [{ currency: 'USD', amount }],
    terminals: [],
  });
  return merchant.wallets.find((w) => w.mode === 'test')!.wallet_id;
}

/** The wallet's balance and the sum of its entries. */
async function books(walletId: string): Promise<{ available: bigint; entries: bigint }> {
  const [wallet] = await db().db.select().from(wallets).where(eq(wallets.id, walletId));
  const entries = await db().db.select().from(ledgerEntries).where(eq(ledgerEntries.walletId, walletId));
  return { available: wallet!.available, entries: entries.reduce((sum, e) => sum + e.amount, 0n) };
}

describe('the wallet ledger', () => {
  it('takes each (wallet, reference, step) once', async () => {
    const walletId = await walletWith(0n);
    expect(await creditWallet(db().db, walletId, 'PAone', 500n)).toBe('applied');
    expect(await creditWallet(db().db, walletId, 'PAone', 500n)).toBe('duplicate');
    expect(await books(walletId)).toEqual({ available: 500n, entries: 500n });
  });

  it('refuses a step that would take the balance below zero, and writes nothing for it', async () => {
    const walletId = await walletWith(300n);
    const reserve = { walletId, reference: 'PApayout', step: 'reserve' as const, amount: -301n };
    expect(await applyLedgerEntry(db().db, reserve)).toBe('insufficient');
    // Refused, so not taken: the same step with an amount the wallet holds goes through.
    expect(await applyLedgerEntry(db().db, { ...reserve, amount: -300n })).toBe('applied');
    expect(await books(walletId)).toEqual({ available: 0n, entries: 0n });
  });

  it('takes no credit or reserve on an inactive wallet, but releases and settles what it reserved', async () => {
    const walletId = await walletWith(1_000n);
    const step = (s: 'reserve' | 'release' | 'credit', amount: bigint, reference = 'PAheld') =>
      applyLedgerEntry(db().db, { walletId, reference, step: s, amount });
    expect(await step('reserve', -400n)).toBe('applied');
    await db().db.update(wallets).set({ status: 'Inactive' }).where(eq(wallets.id, walletId));
    expect(await step('credit', 100n, 'PAcredit')).toBe('inactive');
    expect(await step('reserve', -100n, 'PAother')).toBe('inactive');
    expect(await step('release', 400n)).toBe('applied');
    expect(await books(walletId)).toEqual({ available: 1_000n, entries: 1_000n });
  });

  it('never goes below zero when reserves race for the last of the balance', async () => {
    const walletId = await walletWith(1_000n);
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        applyLedgerEntry(db().db, { walletId, reference: `PArace${i}`, step: 'reserve', amount: -300n }),
      ),
    );
    expect(outcomes.filter((o) => o === 'applied')).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'insufficient')).toHaveLength(5);
    expect(await books(walletId)).toEqual({ available: 100n, entries: 100n });
  });
});
