import { eq, sql } from 'drizzle-orm';
import type { Db, Tx } from '../src/db/client';
import { terminals, transactions } from '../src/db/schema/index';
import type { AftercareKind, Mode, TransactionKind, TransactionStatus } from '../src/contracts';
import { countedDeposits, keptInPayment } from '../src/transactions/deposits';
import { formatUnits, parseUnits } from '../src/lib/units';
import { recordOpsAction } from '../src/transactions/ops-audit';

/** What a refund or chargeback needs to know of a settled transaction. */
export interface AftercareState {
  kind: TransactionKind;
  /** Absent in histories recorded before the workflow checked it. */
  mode?: Mode;
  status: TransactionStatus;
  refunded: boolean;
  chargeback: boolean;
  /** The terminal that took a card payment, and its connector. */
  terminalId: string | null;
  connector: string | null;
  /** The acquirer's reference for a card payment, when it was projected (before that, looked up). */
  acquirerReference: string | null;
  /** For a payin: every deposit with crypto left in the payment has a sender to send it back to. */
  sendersKnown: boolean;
}

/** Reads and records for refunds and chargebacks (`workflows/aftercare.ts`). */
export function aftercareActivities(db: Db) {
  return {
    async aftercareState(input: { transactionId: string }): Promise<AftercareState> {
      const [row] = await db
        .select({
          kind: transactions.kind,
          mode: transactions.mode,
          status: transactions.status,
          refunded: transactions.refunded,
          chargeback: transactions.chargeback,
          terminalId: transactions.terminalId,
          connector: terminals.connector,
          acquirerReference: transactions.acquirerReference,
        })
        .from(transactions)
        .leftJoin(terminals, eq(terminals.id, transactions.terminalId))
        .where(eq(transactions.id, input.transactionId));
      if (!row) throw new Error(`transaction ${input.transactionId} not found`);
      let sendersKnown = true;
      if (row.kind === 'crypto_payin') {
        const deposits = await countedDeposits(db, input.transactionId);
        sendersKnown = deposits.every((d) => d.sender || keptInPayment(d) <= 0n);
      }
      return { ...row, sendersKnown };
    },

    /**
     * Projects an applied refund or chargeback: the flag and its date, once (a retry keeps the first
     * date), with a version above every earlier projection of the transaction. A payin's refund also adds
     * the crypto sent back to `refund_amount` (beside any excess returned earlier); only the first
     * application adds it, so a retry leaves it as it is.
     */
    async markAftercare(input: {
      transactionId: string;
      kind: AftercareKind;
      /** The acquirer's reference for a card refund. */
      reference?: string;
      /** Who asked, for the audit trail, and their reason (histories from before name no one). */
      actor?: string;
      reason?: string;
    }): Promise<void> {
      await db.transaction(async (tx) => {
        const [row] = await tx
          .select({
            kind: transactions.kind,
            status: transactions.status,
            refunded: transactions.refunded,
            details: transactions.details,
          })
          .from(transactions)
          .where(eq(transactions.id, input.transactionId))
          .for('update');
        if (!row) throw new Error(`transaction ${input.transactionId} not found`);
        const set =
          input.kind === 'refund'
            ? {
                refunded: true,
                refundedAt: sql`coalesce(${transactions.refundedAt}, now())`,
                ...(input.reference ? { refundReference: input.reference } : {}),
                ...(row.kind === 'crypto_payin' && !row.refunded
                  ? { details: await withPaymentReturned(tx, input.transactionId, row.details) }
                  : {}),
              }
            : { chargeback: true, chargebackAt: sql`coalesce(${transactions.chargebackAt}, now())` };
        await tx
          .update(transactions)
          .set({ ...set, version: sql`${transactions.version} + 1`, updatedAt: sql`now()` })
          .where(eq(transactions.id, input.transactionId));
        // One refund or chargeback per transaction ever applies, so its kind keys the audit row.
        await recordOpsAction(tx, {
          transactionId: input.transactionId,
          key: input.kind,
          actor: input.actor ?? 'merchant',
          action: input.kind,
          reason: input.reason || null,
          statusBefore: row.status,
          statusAfter: row.status,
        });
      });
    },
  };
}

/** A payin's details once its payment went back: `refund_amount` grows by what each deposit kept. */
async function withPaymentReturned(
  tx: Tx,
  transactionId: string,
  details: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const earlier = typeof details.refund_amount === 'string' ? parseUnits(details.refund_amount, 18) : 0n;
  let returned = earlier ?? 0n;
  for (const deposit of await countedDeposits(tx, transactionId)) {
    const kept = keptInPayment(deposit);
    if (kept > 0n) returned += kept;
  }
  return { ...details, refund_amount: formatUnits(returned, 18) };
}
