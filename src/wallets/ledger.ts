import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Db, Tx } from '../db/client';
import { ledgerEntries, wallets } from '../db/schema/index';

type Executor = Db | Tx;

/** Steps that move money into or out of a wallet anew; an inactive wallet takes none of them. */
const MOVES_MONEY: readonly string[] = ['credit', 'reserve'];

class Refused extends Error {
  constructor(readonly why: 'insufficient' | 'inactive' | 'closed') {
    super(why);
  }
}

/**
 * Adds an entry and moves the wallet's available balance by the same amount, in one database transaction.
 * A second call with the same (wallet, reference, step) changes nothing and returns 'duplicate'; an entry
 * that would take the balance below zero changes nothing and returns 'insufficient'; a credit or reserve on
 * an inactive wallet changes nothing and returns 'inactive'. Releases and settles of earlier reserves always
 * go through.
 *
 * `onlyWhile`: a condition the balance moves under, checked in the statement that moves it (it may lock
 * what it reads, as `sendsOpen` does); when it does not hold, nothing changes and the answer is 'closed'.
 */
export async function applyLedgerEntry(
  db: Executor,
  entry: {
    walletId: string;
    reference: string;
    step: 'credit' | 'reserve' | 'release' | 'settle' | 'refund' | 'chargeback';
    amount: bigint;
  },
  onlyWhile?: SQL<boolean>,
): Promise<'applied' | 'duplicate' | 'insufficient' | 'inactive' | 'closed'> {
  return db
    .transaction(async (tx) => {
      const inserted = await tx
        .insert(ledgerEntries)
        .values(entry)
        .onConflictDoNothing({
          target: [ledgerEntries.walletId, ledgerEntries.reference, ledgerEntries.step],
        })
        .returning({ id: ledgerEntries.id });
      // A step already taken answers 'duplicate' whatever the wallet's state is now.
      if (inserted.length === 0) return 'duplicate';
      if (entry.amount === 0n) return 'applied';
      const needsActive = MOVES_MONEY.includes(entry.step);
      const moved = await tx
        .update(wallets)
        .set({ available: sql`${wallets.available} + ${entry.amount}` })
        .where(
          and(
            eq(wallets.id, entry.walletId),
            sql`${wallets.available} + ${entry.amount} >= 0`,
            needsActive ? eq(wallets.status, 'Active') : undefined,
            onlyWhile,
          ),
        )
        .returning({ id: wallets.id });
      if (moved.length === 0) {
        const [wallet] = await tx
          .select({ status: wallets.status, allowed: onlyWhile ?? sql<boolean>`true` })
          .from(wallets)
          .where(eq(wallets.id, entry.walletId));
        throw new Refused(
          wallet && !wallet.allowed
            ? 'closed'
            : needsActive && wallet?.status !== 'Active'
              ? 'inactive'
              : 'insufficient',
        );
      }
      return 'applied' as const;
    })
    .catch((error: unknown) => {
      if (error instanceof Refused) return error.why;
      throw error;
    });
}

export async function creditWallet(db: Executor, walletId: string, reference: string, amount: bigint) {
  if (amount <= 0n) throw new Error('a credit must be positive');
  return applyLedgerEntry(db, { walletId, reference, step: 'credit', amount });
}
