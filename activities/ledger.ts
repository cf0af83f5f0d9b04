import { and, eq } from 'drizzle-orm';
import { ApplicationFailure } from '@temporalio/common';
import { failureTypes } from '../src/contracts';
import type { Db } from '../src/db/client';
import { businessOutcome } from './connector-calls';
import { applyLedgerEntry, creditWallet } from '../src/wallets/ledger';
import { closeCardSends, sendsOpen } from '../src/transactions/card-vault';
import { ledgerEntries, wallets } from '../src/db/schema/index';

export interface WalletView {
  walletId: string;
  currency: string;
  available: string;
  status: 'Active' | 'Inactive';
}

const walletInactive = () => businessOutcome('The wallet is inactive.', failureTypes.walletInactive);

/** What a payout takes from its wallet: the amount and the merchant's fee together, in minor units. */
export interface PayoutFunds {
  walletId: string;
  transactionId: string;
  amountMinor: string;
}

/**
 * Takes a payout's funds out of the available balance once, or refuses (no funds, an inactive wallet).
 * Says whether this call took them ('applied') or an earlier one had ('duplicate'). `whileSendsOpen`: only
 * while the payout's sends are open (a send inside its workflow task), so an attempt held up on the wallet
 * row reserves nothing once the payout has ended without a send of its own, after the ending's release
 * found nothing to give back (`sendsOpen`).
 */
export async function reservePayoutFunds(
  db: Db,
  funds: PayoutFunds,
  { whileSendsOpen = false } = {},
): Promise<'applied' | 'duplicate'> {
  const result = await applyLedgerEntry(
    db,
    {
      walletId: funds.walletId,
      reference: funds.transactionId,
      step: 'reserve',
      amount: -BigInt(funds.amountMinor),
    },
    whileSendsOpen ? sendsOpen(funds.transactionId) : undefined,
  );
  if (result === 'insufficient') throw businessOutcome('Insufficient funds.', failureTypes.insufficientFunds);
  if (result === 'inactive') throw walletInactive();
  if (result === 'closed')
    throw businessOutcome('The payout ended before it was sent.', failureTypes.declined);
  return result;
}

/**
 * Where a payout's funds stand in the wallet: not reserved, held by the reserve, settled (they left for
 * good) or released (given back).
 */
export async function payoutFundsState(
  db: Db,
  funds: Pick<PayoutFunds, 'walletId' | 'transactionId'>,
): Promise<'none' | 'held' | 'settled' | 'released'> {
  const steps = new Set(
    (
      await db
        .select({ step: ledgerEntries.step })
        .from(ledgerEntries)
        .where(
          and(eq(ledgerEntries.walletId, funds.walletId), eq(ledgerEntries.reference, funds.transactionId)),
        )
    ).map((entry) => entry.step),
  );
  if (steps.has('settle')) return 'settled';
  if (steps.has('release')) return 'released';
  return steps.has('reserve') ? 'held' : 'none';
}

/**
 * Records once that a payout's reserved funds left for good (the reserve already moved the balance). Only
 * funds still held settle: released ones went back to the wallet, and nothing reserved cannot leave.
 */
export async function settlePayoutFunds(
  db: Db,
  funds: Pick<PayoutFunds, 'walletId' | 'transactionId'>,
): Promise<'applied' | 'duplicate' | 'not-held'> {
  const state = await payoutFundsState(db, funds);
  if (state === 'settled') return 'duplicate';
  if (state !== 'held') return 'not-held';
  // A zero entry is never refused.
  return (await applyLedgerEntry(db, {
    walletId: funds.walletId,
    reference: funds.transactionId,
    step: 'settle',
    amount: 0n,
  })) as 'applied' | 'duplicate';
}

/**
 * Wallet steps of a payout, each keyed by (wallet, transaction, step) so a retry is a no-op: reserve takes
 * the amount out of the available balance (or refuses), release gives it back, settle records that the
 * reserved amount left for good (a zero entry: the reserve already moved the balance).
 */
export function ledgerActivities(db: Db) {
  return {
    async getWallet(input: { walletId: string }): Promise<WalletView> {
      const [wallet] = await db.select().from(wallets).where(eq(wallets.id, input.walletId));
      if (!wallet) throw businessOutcome(`Wallet ${input.walletId} not found.`, failureTypes.notFound);
      return {
        walletId: wallet.id,
        currency: wallet.currency,
        available: wallet.available.toString(),
        status: wallet.status,
      };
    },

    /**
     * Gives a payout's reserved funds back, once, and only while they are held: nothing was reserved, or
     * they were settled (the payout was paid: a Reset's run that went another way), then nothing moves.
     * The payout's sends are closed first (a release is a payout's ending): an attempt of a lost task held
     * up before its reserve then reserves nothing after it (`sendsOpen`), and one whose reserve was under
     * way has committed it before the close did, so it is released here.
     */
    async releaseFunds(input: {
      walletId: string;
      transactionId: string;
      amountMinor: string;
    }): Promise<void> {
      await closeCardSends(db, input.transactionId);
      if ((await payoutFundsState(db, input)) !== 'held') return;
      await applyLedgerEntry(db, {
        walletId: input.walletId,
        reference: input.transactionId,
        step: 'release',
        amount: BigInt(input.amountMinor),
      });
    },

    async settleFunds(input: { walletId: string; transactionId: string }): Promise<void> {
      if ((await settlePayoutFunds(db, input)) === 'not-held')
        throw ApplicationFailure.nonRetryable(
          `the funds of payout ${input.transactionId} are not held: nothing to settle`,
        );
    },

    /**
     * Takes a payin's credit back out of the wallet once, as the `refund` or `chargeback` step; refused
     * (insufficient funds) when the wallet no longer holds it, since a balance never goes negative.
     * Returns what was taken back, in minor units ("0" when nothing was credited).
     */
    async reverseCredit(input: { transactionId: string; step: 'refund' | 'chargeback' }): Promise<string> {
      const credits = await db
        .select({ walletId: ledgerEntries.walletId, amount: ledgerEntries.amount })
        .from(ledgerEntries)
        .where(and(eq(ledgerEntries.reference, input.transactionId), eq(ledgerEntries.step, 'credit')));
      let reversed = 0n;
      for (const credit of credits) {
        const result = await applyLedgerEntry(db, {
          walletId: credit.walletId,
          reference: input.transactionId,
          step: input.step,
          amount: -credit.amount,
        });
        if (result === 'insufficient')
          throw businessOutcome(
            'The wallet no longer holds the amount this transaction credited.',
            failureTypes.insufficientFunds,
          );
        reversed += credit.amount;
      }
      return reversed.toString();
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
