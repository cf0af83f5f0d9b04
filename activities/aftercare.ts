import { eq, sql } from 'drizzle-orm';
import type { Db } from '../src/db/client';
import { terminals, transactions } from '../src/db/schema/index';
import type { AftercareKind, TransactionKind, TransactionStatus } from '../src/contracts';
import { countedDeposits, keptInPayment } from '../src/transactions/deposits';

/** What a refund or chargeback needs to know of a settled transaction. */
export interface AftercareState {
  kind: TransactionKind;
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
     * date), with a version above every earlier projection of the transaction.
     */
    async markAftercare(input: {
      transactionId: string;
      kind: AftercareKind;
      /** The acquirer's reference for a card refund. */
      reference?: string;
    }): Promise<void> {
      const set =
        input.kind === 'refund'
          ? {
              refunded: true,
              refundedAt: sql`coalesce(${transactions.refundedAt}, now())`,
              ...(input.reference ? { refundReference: input.reference } : {}),
            }
          : { chargeback: true, chargebackAt: sql`coalesce(${transactions.chargebackAt}, now())` };
      await db
        .update(transactions)
        .set({ ...set, version: sql`${transactions.version} + 1`, updatedAt: sql`now()` })
        .where(eq(transactions.id, input.transactionId));
    },
  };
}
