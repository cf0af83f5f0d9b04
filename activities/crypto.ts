import { and, eq, sql } from 'drizzle-orm';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { isFinal } from '../src/contracts';
import { finalAlready } from './authority';
import type { Db } from '../src/db/client';
import { cryptoDeposits, cryptoTolerances, merchants } from '../src/db/schema/index';
import type { ChainConnector, FiatPayouts } from './connectors/types';
import { countedDeposits, holdDeposit, keptInPayment, type DepositRef } from '../src/transactions/deposits';
import { findTransaction } from '../src/transactions/lookup';
import type { Mode } from '../src/lib/vocabulary';
import { formatUnits } from '../src/lib/units';

/** A projected transaction's mode; retried until the projection exists. */
async function modeOf(db: Db, transactionId: string): Promise<Mode> {
  const row = await findTransaction(db, transactionId);
  if (!row) throw new Error(`transaction ${transactionId} is not projected yet`);
  return row.mode;
}

/** A deposit-taking transaction's settings and address, fetched in its first step (activities/index.ts). */
export interface DepositQuery {
  merchantId: string;
  transactionId: string;
  network: string;
  mode: Mode;
  cryptoCurrency: string;
}

export interface CryptoSettings {
  /** Tolerance in the paid asset's own units, when the merchant set one for that asset. */
  assetTolerance: string | null;
  /** Tolerance as a fiat amount (major units of the transaction's currency), converted at the locked rate. */
  fiatTolerance: string | null;
  overpaidPolicy: 'keep' | 'refund';
  underpaidPolicy: 'fail' | 'accept';
}

/** Deposits, sends and settlement bookkeeping for ramps and payins; each keyed by the transaction. */
export function cryptoActivities(db: Db, chain: ChainConnector & FiatPayouts) {
  /**
   * A deposit goes back only as its transaction's run decided while it could: one the payment counted is
   * given back only before the transaction is final (a failure's refunds, an overpayment's excess), and a
   * deposit counted is never refunded as one that arrived late. Otherwise the run is one a Reset started,
   * going another way than the run it replaced, and ends with the final state (nothing is sent). A final
   * status this very run wrote does not stop it: a workflow task whose completion the server refused (an
   * update arrived while it ran) may have projected its end already, and its retry, which sees the update,
   * decides again (workflows/projection.ts).
   */
  const refundable = async (input: { transactionId: string; txHash: string; countedInPayment: boolean }) => {
    const [recorded] = await db
      .select({ disposition: cryptoDeposits.disposition, counted: cryptoDeposits.countedInPayment })
      .from(cryptoDeposits)
      .where(
        and(eq(cryptoDeposits.transactionId, input.transactionId), eq(cryptoDeposits.txHash, input.txHash)),
      );
    const countedBefore = recorded?.counted === true;
    if (!input.countedInPayment && !countedBefore) return;
    const row = await findTransaction(db, input.transactionId);
    const runId = Context.current().info.workflowExecution?.runId;
    if (row && isFinal(row.status) && row.statusRunId !== runId)
      throw finalAlready({ status: row.status, message: row.message });
    if (!input.countedInPayment)
      throw ApplicationFailure.nonRetryable(
        `deposit ${input.txHash} was counted in payment ${input.transactionId}: it is not refunded as a late one`,
      );
  };
  return {
    async cryptoSettings(input: { merchantId: string; cryptoCurrency: string }): Promise<CryptoSettings> {
      const [merchant] = await db.select().from(merchants).where(eq(merchants.id, input.merchantId));
      if (!merchant) throw new Error(`merchant ${input.merchantId} not found`);
      const [asset] = await db
        .select({ tolerance: cryptoTolerances.tolerance })
        .from(cryptoTolerances)
        .where(
          and(
            eq(cryptoTolerances.merchantId, input.merchantId),
            eq(cryptoTolerances.cryptoCurrency, input.cryptoCurrency),
          ),
        );
      return {
        assetTolerance: asset?.tolerance ?? null,
        fiatTolerance: merchant.cryptoToleranceFiat,
        overpaidPolicy: merchant.overpaidPolicy === 'refund' ? 'refund' : 'keep',
        underpaidPolicy: merchant.underpaidPolicy === 'accept' ? 'accept' : 'fail',
      };
    },

    /** `mode` is absent in histories from before real chains; the transaction's row says it then. */
    async openDepositAddress(input: {
      transactionId: string;
      network: string;
      mode?: Mode;
      currency?: string;
    }): Promise<string> {
      const mode = input.mode ?? (await modeOf(db, input.transactionId));
      return chain.depositAddress({
        transactionId: input.transactionId,
        network: input.network,
        mode,
        ...(input.currency ? { currency: input.currency } : {}),
      });
    },

    /**
     * The deposits recorded as counted towards the payment (by any run of the transaction): what a Reset's
     * run counts that the run it replaced took after the Reset's point.
     */
    async countedDepositsOf(input: { transactionId: string }): Promise<DepositRef[]> {
      return (await countedDeposits(db, input.transactionId)).map((row) => ({
        transactionId: row.transactionId,
        txHash: row.txHash,
        amount: row.amount,
        ...(row.sender ? { sender: row.sender } : {}),
      }));
    },

    /** Records a deposit counted towards the payment; a refund or hold recorded first is kept. */
    async recordDeposit(input: DepositRef): Promise<void> {
      await db
        .insert(cryptoDeposits)
        .values({
          ...input,
          sender: input.sender ?? null,
          disposition: 'counted',
          countedInPayment: true,
        })
        .onConflictDoNothing({ target: [cryptoDeposits.transactionId, cryptoDeposits.txHash] });
    },

    /**
     * Sends `refundAmount` of a deposit back to its sender and records why: all of it, which makes it
     * `refunded`, or the excess of an overpayment, which leaves it counted. Keyed by the deposit, so a
     * retry refunds once. Returns the refund's transaction hash.
     */
    async refundDeposit(
      input: DepositRef & {
        sender: string;
        network: string;
        currency: string;
        reason: string;
        countedInPayment: boolean;
        refundAmount: string;
        whole: boolean;
      },
    ): Promise<string> {
      await refundable(input);
      const refundTxHash = await chain.send({
        idempotencyKey: `refund:${input.transactionId}:${input.txHash}`,
        transactionId: input.transactionId,
        mode: await modeOf(db, input.transactionId),
        network: input.network,
        address: input.sender,
        amount: input.refundAmount,
        currency: input.currency,
      });
      const recorded = {
        disposition: input.whole ? ('refunded' as const) : ('counted' as const),
        reason: input.reason,
        refundAmount: input.refundAmount,
        refundTxHash,
        countedInPayment: input.countedInPayment,
      };
      await db
        .insert(cryptoDeposits)
        .values({
          transactionId: input.transactionId,
          txHash: input.txHash,
          amount: input.amount,
          sender: input.sender,
          ...recorded,
        })
        .onConflictDoUpdate({
          target: [cryptoDeposits.transactionId, cryptoDeposits.txHash],
          set: { ...recorded, updatedAt: sql`now()` },
        });
      return refundTxHash;
    },

    /**
     * Returns a settled payin's crypto to the payer: what each counted deposit left in the payment
     * (its amount less any excess already sent back or held) goes back to its sender, each send keyed by
     * the deposit, so a retry sends once. The caller has checked that every such deposit has a sender.
     */
    async refundPayment(input: { transactionId: string }): Promise<string[]> {
      const row = await findTransaction(db, input.transactionId);
      if (!row) throw new Error(`transaction ${input.transactionId} not found`);
      const details = row.details as { crypto_currency?: string; crypto_network?: string };
      const deposits = await countedDeposits(db, input.transactionId);
      const hashes: string[] = [];
      for (const deposit of deposits) {
        const kept = keptInPayment(deposit);
        if (kept <= 0n) continue;
        if (!deposit.sender) throw new Error(`deposit ${deposit.txHash} has no sender to refund to`);
        hashes.push(
          await chain.send({
            idempotencyKey: `payment-refund:${input.transactionId}:${deposit.txHash}`,
            transactionId: input.transactionId,
            mode: row.mode,
            network: details.crypto_network!,
            address: deposit.sender,
            amount: formatUnits(kept, 18),
            currency: details.crypto_currency!,
          }),
        );
      }
      return hashes;
    },

    /** Keeps a deposit that cannot be counted or refunded for ops, with the reason. */
    async holdDeposit(
      input: DepositRef & { reason: string; countedInPayment: boolean; heldAmount: string },
    ): Promise<void> {
      await holdDeposit(db, input);
    },

    async sendCrypto(input: {
      transactionId: string;
      network: string;
      address: string;
      amount: string;
      currency: string;
    }) {
      return chain.send({
        idempotencyKey: `send:${input.transactionId}`,
        mode: await modeOf(db, input.transactionId),
        ...input,
      });
    },

    async payoutFiat(input: { transactionId: string; currency: string; amount: string }): Promise<string> {
      return chain.payout({
        idempotencyKey: `offramp:${input.transactionId}`,
        currency: input.currency,
        amount: input.amount,
      });
    },
  };
}
