import { asc, desc, eq, inArray, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { webhookAttempts, webhookEvents } from '../db/schema/index';
import type { WebhookDeliveryInput } from '../contracts';

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
