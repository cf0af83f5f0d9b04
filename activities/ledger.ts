import { and, eq, sql } from 'drizzle-orm';
import { ApplicationFailure } from '@temporalio/common';
import { failureTypes } from '../src/temporal/contracts';
import type { Db, Tx } from '../src/db/client';
import { ledgerEntries, wallets } from '../src/db/schema/index';

type Executor = Db | Tx;

/** Steps that move money into or out of a wallet anew; an inactive wallet takes none of them. */
const MOVES_MONEY: readonly string[] = ['credit', 'reserve'];

class Refused extends Error {
  constructor(readonly why: 'insufficient' | 'inactive') {
    super(why);
  }
}

/**
 * Adds an entry and moves the wallet's available balance by the same amount, in one database transaction.
 * A second call with the same (wallet, reference, step) changes nothing and returns 'duplicate'; an entry
 * that would take the balance below zero changes nothing and returns 'insufficient'; a credit or reserve on
 * an inactive wallet changes nothing and returns 'inactive'. Releases and settles of earlier reserves always
 * go through.
 */
export async function applyLedgerEntry(
  db: Executor,
  entry: {
    walletId: string;
    reference: string;
    step: 'credit' | 'reserve' | 'release' | 'settle';
    amount: bigint;
  },
): Promise<'applied' | 'duplicate' | 'insufficient' | 'inactive'> {
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
          ),
        )
        .returning({ id: wallets.id });
      if (moved.length === 0) {
        const [wallet] = await tx
          .select({ status: wallets.status })
          .from(wallets)
          .where(eq(wallets.id, entry.walletId));
        throw new Refused(needsActive && wallet?.status !== 'Active' ? 'inactive' : 'insufficient');
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

export interface WalletView {
  walletId: string;
  currency: string;
  available: string;
  status: 'Active' | 'Inactive';
}

const walletInactive = () =>
  ApplicationFailure.nonRetryable('The wallet is inactive.', failureTypes.walletInactive);

/**
 * Wallet steps of a payout, each keyed by (wallet, transaction, step) so a retry is a no-op: reserve takes
 * the amount out of the available balance (or refuses), release gives it back, settle records that the
 * reserved amount left for good (a zero entry: the reserve already moved the balance).
 */
export function ledgerActivities(db: Db) {
  return {
    async getWallet(input: { walletId: string }): Promise<WalletView> {
      const [wallet] = await db.select().from(wallets).where(eq(wallets.id, input.walletId));
      if (!wallet)
        throw ApplicationFailure.nonRetryable(`Wallet ${input.walletId} not found.`, failureTypes.notFound);
      return {
        walletId: wallet.id,
        currency: wallet.currency,
        available: wallet.available.toString(),
        status: wallet.status,
      };
    },

    async reserveFunds(input: {
      walletId: string;
      transactionId: string;
      amountMinor: string;
    }): Promise<void> {
      const result = await applyLedgerEntry(db, {
        walletId: input.walletId,
        reference: input.transactionId,
        step: 'reserve',
        amount: -BigInt(input.amountMinor),
      });
      if (result === 'insufficient')
        throw ApplicationFailure.nonRetryable('Insufficient funds.', failureTypes.insufficientFunds);
      if (result === 'inactive') throw walletInactive();
    },

    async releaseFunds(input: {
      walletId: string;
      transactionId: string;
      amountMinor: string;
    }): Promise<void> {
      const [reserved] = await db
        .select({ id: ledgerEntries.id })
        .from(ledgerEntries)
        .where(
          and(
            eq(ledgerEntries.walletId, input.walletId),
            eq(ledgerEntries.reference, input.transactionId),
            eq(ledgerEntries.step, 'reserve'),
          ),
        );
      if (!reserved) return;
      await applyLedgerEntry(db, {
        walletId: input.walletId,
        reference: input.transactionId,
        step: 'release',
        amount: BigInt(input.amountMinor),
      });
    },

    async settleFunds(input: { walletId: string; transactionId: string }): Promise<void> {
      await applyLedgerEntry(db, {
        walletId: input.walletId,
        reference: input.transactionId,
        step: 'settle',
        amount: 0n,
      });
    },

    /** Credits a wallet once per transaction (crypto payins); an inactive wallet refuses. */
    async creditFunds(input: {
      walletId: string;
      transactionId: string;
      amountMinor: string;
    }): Promise<void> {
      const result = await creditWallet(db, input.walletId, input.transactionId, BigInt(input.amountMinor));
      if (result === 'inactive') throw walletInactive();
    },
  };
}
