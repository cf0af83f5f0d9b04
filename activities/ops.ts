import { eq } from 'drizzle-orm';
import type { Db } from '../src/db/client';
import { transactions } from '../src/db/schema/index';
import type { WebhookDeliveryInput } from '../src/contracts';
import { recordOpsAction, type OpsActionRecord } from '../src/transactions/ops-audit';
import { prepareRedelivery } from '../src/transactions/webhook-events';

/** The audit trail of ops actions, and the preparation of a webhook redelivery a workflow starts. */
export function opsActivities(db: Db, schedule: { delaysSeconds: number[]; windowSeconds: number }) {
  return {
    async recordOpsAction(input: OpsActionRecord): Promise<void> {
      await recordOpsAction(db, input);
    },

    /** New delivery runs of the transaction's events, audited; the workflow starts them. */
    async prepareWebhookRedelivery(input: {
      transactionId: string;
      actor: string;
    }): Promise<WebhookDeliveryInput[]> {
      const runs = await prepareRedelivery(db, input.transactionId, schedule);
      const [row] = await db
        .select({ status: transactions.status })
        .from(transactions)
        .where(eq(transactions.id, input.transactionId));
      const status = row?.status ?? 'PENDING';
      await recordOpsAction(db, {
        transactionId: input.transactionId,
        key: `redeliverWebhooks:${runs.map((r) => `${r.eventId}.${r.run}`).join(',') || 'none'}`,
        actor: input.actor,
        action: 'redeliverWebhooks',
        reason: null,
        statusBefore: status,
        statusAfter: status,
      });
      return runs;
    },
  };
}
