import { asc, desc, eq, inArray, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { transactions, webhookAttempts, webhookEvents } from '../db/schema/index';
import type { WebhookDeliveryInput } from '../contracts';
import { recordOpsAction } from './ops-audit';

/** A transaction's webhook events (or one event, by its id), newest first. */
export async function findWebhookEvents(db: Db, transactionOrEventId: string) {
  return db
    .select()
    .from(webhookEvents)
    .where(
      or(eq(webhookEvents.id, transactionOrEventId), eq(webhookEvents.transactionId, transactionOrEventId)),
    )
    .orderBy(desc(webhookEvents.createdAt));
}

/** Every delivery attempt of these events, in order. */
export async function webhookAttemptsOf(db: Db, eventIds: string[]) {
  if (eventIds.length === 0) return [];
  return db
    .select()
    .from(webhookAttempts)
    .where(inArray(webhookAttempts.eventId, eventIds))
    .orderBy(asc(webhookAttempts.eventId), asc(webhookAttempts.run), asc(webhookAttempts.attempt));
}

/**
 * Prepares a new delivery run of every webhook event of a transaction (or of one event): the next run
 * number after the attempts recorded so far, and the event set back to `pending`. The caller starts the
 * delivery workflows.
 */
export async function prepareRedelivery(
  db: Db,
  transactionOrEventId: string,
  schedule: { delaysSeconds: number[]; windowSeconds: number },
): Promise<WebhookDeliveryInput[]> {
  const events = await findWebhookEvents(db, transactionOrEventId);
  const runs: WebhookDeliveryInput[] = [];
  for (const event of events) {
    const [last] = await db
      .select({ run: sql<number>`coalesce(max(${webhookAttempts.run}), 0)` })
      .from(webhookAttempts)
      .where(eq(webhookAttempts.eventId, event.id));
    await db.update(webhookEvents).set({ status: 'pending' }).where(eq(webhookEvents.id, event.id));
    runs.push({ eventId: event.id, run: Number(last?.run ?? 0) + 1, ...schedule });
  }
  return runs;
}

/**
 * A redelivery an operator asked for: the new runs, and one audit row per transaction saying who asked.
 * The audit key names the runs, so a retried call records it once.
 */
export async function prepareAuditedRedelivery(
  db: Db,
  transactionOrEventId: string,
  schedule: { delaysSeconds: number[]; windowSeconds: number },
  actor: string,
): Promise<WebhookDeliveryInput[]> {
  const events = await findWebhookEvents(db, transactionOrEventId);
  const runs = await prepareRedelivery(db, transactionOrEventId, schedule);
  for (const transactionId of new Set(events.map((e) => e.transactionId))) {
    const mine = runs.filter((r) =>
      events.some((e) => e.id === r.eventId && e.transactionId === transactionId),
    );
    const [row] = await db
      .select({ status: transactions.status })
      .from(transactions)
      .where(eq(transactions.id, transactionId));
    const status = row?.status ?? 'PENDING';
    await recordOpsAction(db, {
      transactionId,
      key: `redeliverWebhooks:${mine.map((r) => `${r.eventId}.${r.run}`).join(',')}`,
      actor,
      action: 'redeliverWebhooks',
      reason: null,
      statusBefore: status,
      statusAfter: status,
    });
  }
  return runs;
}
