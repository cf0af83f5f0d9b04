import { eq } from 'drizzle-orm';
import type { Db } from '../src/db/client';
import { transactions, webhookEvents } from '../src/db/schema/index';
import type { WebhookDeliveryInput } from '../src/contracts';
import { recordOpsAction, recordOpsOutcome, type OpsActionRecord } from '../src/transactions/ops-audit';
import { prepareAuditedRedelivery } from '../src/transactions/webhook-events';

/** The audit trail of ops actions, and the preparation of a webhook redelivery a workflow starts. */
export function opsActivities(db: Db, schedule: { delaysSeconds: number[]; windowSeconds: number }) {
  return {
    async recordOpsAction(input: OpsActionRecord): Promise<void> {
      await recordOpsAction(db, input);
    },

    /** The status an audited ops action left the transaction in, once known. */
    async recordOpsOutcome(input: {
      transactionId: string;
      key: string;
      statusAfter: string;
    }): Promise<void> {
      await recordOpsOutcome(db, input);
    },

    /** An ops action on one webhook event's delivery, audited on its transaction. */
    async recordWebhookOpsAction(input: {
      eventId: string;
      key: string;
      actor: string;
      action: string;
    }): Promise<void> {
      const [row] = await db
        .select({ transactionId: webhookEvents.transactionId, status: transactions.status })
        .from(webhookEvents)
        .innerJoin(transactions, eq(transactions.id, webhookEvents.transactionId))
        .where(eq(webhookEvents.id, input.eventId));
      if (!row) return;
      await recordOpsAction(db, {
        transactionId: row.transactionId,
        key: `${input.key}:${input.eventId}`,
        actor: input.actor,
        action: input.action,
        reason: null,
        statusBefore: row.status,
        statusAfter: row.status,
      });
    },

    /** New delivery runs of the transaction's events, audited; the workflow starts them. */
    async prepareWebhookRedelivery(input: {
      transactionId: string;
      actor: string;
    }): Promise<WebhookDeliveryInput[]> {
      return prepareAuditedRedelivery(db, input.transactionId, schedule, input.actor);
    },
  };
}
