import { and, eq, sql, TransactionRollbackError } from 'drizzle-orm';
import type { Db, Tx } from '../src/db/client';
import { ledgerEntries, wallets } from '../src/db/schema/index';

type Executor = Db | Tx;

/**
 * Adds an entry and moves the wallet's available balance by the same amount, in one database transaction.
 * A second call with the same (wallet, reference, step) changes nothing and returns false; an entry that
 * would take the balance below zero changes nothing and returns 'insufficient'.
 */
export async function applyLedgerEntry(
  db: Executor,
  entry: {
    walletId: string;
    reference: string;
    step: 'credit' | 'reserve' | 'release' | 'settle';
    amount: bigint;
  },
): Promise<'applied' | 'duplicate' | 'insufficient'> {
  return db
    .transaction(async (tx) => {
      const inserted = await tx
        .insert(ledgerEntries)
        .values(entry)
        .onConflictDoNothing({
          target: [ledgerEntries.walletId, ledgerEntries.reference, ledgerEntries.step],
        })
        .returning({ id: ledgerEntries.id });
      if (inserted.length === 0) return 'duplicate';
      if (entry.amount === 0n) return 'applied';
      const moved = await tx
        .update(wallets)
        .set({ available: sql`${wallets.available} + ${entry.amount}` })
        .where(and(eq(wallets.id, entry.walletId), sql`${wallets.available} + ${entry.amount} >= 0`))
        .returning({ id: wallets.id });
      if (moved.length === 0) {
        tx.rollback();
      }
      return 'applied';
    })
    .catch((error: unknown) => {
      if (error instanceof TransactionRollbackError) return 'insufficient' as const;
      throw error;
    });
}

export async function creditWallet(db: Executor, walletId: string, reference: string, amount: bigint) {
  if (amount <= 0n) throw new Error('a credit must be positive');
  return applyLedgerEntry(db, { walletId, reference, step: 'credit', amount });
}
