import { and, asc, desc, eq, inArray, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { transactions, webhookAttempts, webhookEvents } from '../db/schema/index';
import type { WebhookDeliveryInput } from '../contracts';
import { webhookSchedule, type Config } from '../platform/config';
import { ApiError } from '../platform/errors';
import { startWebhookRedeliveries } from '../temporal/client';
import type { Client } from '@temporalio/client';
import { recordOpsAction } from './ops-audit';
import type { MerchantScope } from './deps';
import { beyond, cachedCount, pageMeta, period, position, type ListQuery } from './lists';
import { pageOf, type Page } from './paging';

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
    const run = Math.max(Number(last?.run ?? 0), event.run) + 1;
    await db.update(webhookEvents).set({ status: 'pending', run }).where(eq(webhookEvents.id, event.id));
    runs.push({ eventId: event.id, run, ...schedule });
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

/** A webhook-log request, validated (docs/webhooks.md, the event log). */
export interface EventLogQuery extends Pick<
  ListQuery,
  'transaction_start_date' | 'transaction_end_date' | 'nextCursor' | 'limit'
> {
  transaction_id?: string | undefined;
  delivered?: boolean | undefined;
}

type EventRow = typeof webhookEvents.$inferSelect;
type AttemptRow = typeof webhookAttempts.$inferSelect;

/** What an event announced, from its key: a final status (`status`), a `refund` or a `chargeback`. */
export const eventTypeOf = (eventKey: string): string =>
  eventKey.startsWith('status:') ? 'status' : eventKey;

/** An event as the log shows it: what it told (the transaction's status then), and every attempt. */
function eventView(event: EventRow, attempts: AttemptRow[]) {
  let status: string | null = null;
  try {
    status = (JSON.parse(event.body) as { status?: string }).status ?? null;
  } catch {
    // A body is JSON we wrote; if it ever is not, the log still lists the event.
  }
  return {
    event_id: event.id,
    transaction_id: event.transactionId,
    event_type: eventTypeOf(event.eventKey),
    status,
    created_at: event.createdAt.toISOString(),
    delivered: event.status === 'delivered',
    attempts: attempts
      .filter((a) => a.eventId === event.id)
      .map((a) => ({
        attempted_at: a.startedAt.toISOString(),
        http_status: a.httpStatus,
        latency_ms: a.latencyMs,
        error: a.error,
      })),
  };
}

/**
 * The merchant's webhook events of the key's mode, newest first, each with every delivery attempt its
 * delivery workflows recorded; paged by keyset as the transaction lists are.
 */
export async function listWebhookEvents(
  db: Db,
  masterKey: string,
  merchant: MerchantScope,
  query: EventLogQuery,
): Promise<Page<ReturnType<typeof eventView>>> {
  const scope = { list: 'webhook-events', ...merchant };
  const { direction, cursor } = position(masterKey, scope, query);
  const e = webhookEvents;
  const filters = [
    eq(e.merchantId, merchant.merchantId),
    eq(e.mode, merchant.mode),
    ...period(e.createdAt, query.transaction_start_date, query.transaction_end_date),
    ...(query.transaction_id ? [eq(e.transactionId, query.transaction_id)] : []),
    ...(query.delivered === undefined
      ? []
      : [query.delivered ? eq(e.status, 'delivered') : ne(e.status, 'delivered')]),
  ];
  const order = direction === 'next' ? [desc(e.createdAt), desc(e.id)] : [asc(e.createdAt), asc(e.id)];
  const [rows, total] = await Promise.all([
    db
      .select({ event: e, at: sql<string>`${e.createdAt}::text` })
      .from(e)
      .where(and(...filters, ...(cursor ? [beyond(e.createdAt, e.id, cursor, direction, 'text')] : [])))
      .orderBy(...order)
      .limit(query.limit + 1),
    cachedCount(db, scope, query, e, filters),
  ]);
  const page = pageOf(
    rows.map((r) => ({ ...r, cursor: { at: r.at, id: r.event.id } })),
    { limit: query.limit, direction, fromCursor: cursor !== undefined },
  );
  const attempts = await webhookAttemptsOf(
    db,
    page.rows.map((r) => r.event.id),
  );
  return {
    message: 'Webhook events retrieved successfully.',
    data: page.rows.map((r) => eventView(r.event, attempts)),
    meta: pageMeta(masterKey, scope, page, total),
  };
}

/** One of the merchant's events (of the key's mode) as the log shows it, or undefined. */
export async function findMerchantEvent(db: Db, merchant: MerchantScope, eventId: string) {
  const [event] = await db
    .select()
    .from(webhookEvents)
    .where(
      and(
        eq(webhookEvents.id, eventId),
        eq(webhookEvents.merchantId, merchant.merchantId),
        eq(webhookEvents.mode, merchant.mode),
      ),
    );
  return event ? eventView(event, await webhookAttemptsOf(db, [event.id])) : undefined;
}

/**
 * A merchant's redelivery of one of its events now (docs/webhooks.md): a new delivery run of the same
 * `event_id` and body with its own retries, audited with the merchant as actor. Asked again before its
 * first attempt, it starts nothing more. Answers the event as it is after.
 */
export async function redeliverMerchantEvent(
  deps: { db: Db; temporal: Client; config: Config },
  merchant: MerchantScope,
  eventId: string,
) {
  const event = await findMerchantEvent(deps.db, merchant, eventId);
  if (!event) throw new ApiError('ROUTE_NOT_FOUND', 'Webhook event not found.');
  const runs = await prepareAuditedRedelivery(
    deps.db,
    event.event_id,
    webhookSchedule(deps.config),
    `merchant:${merchant.merchantId}`,
  );
  await startWebhookRedeliveries(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE, runs);
  return (await findMerchantEvent(deps.db, merchant, eventId)) ?? event;
}
