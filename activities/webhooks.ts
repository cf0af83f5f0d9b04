import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../src/db/client';
import { transactions, webhookAttempts, webhookEvents } from '../src/db/schema/index';
import { newId } from '../src/ciphers/ids';
import { transactionBody } from '../src/transactions/view';
import { stringifyExact } from '../src/lib/json';
import { merchantWebhookSecret } from '../src/merchants/keys';
import { PrivateAddressError, type Resolver } from '../src/net/address-policy';
import { PostTimeoutError, postToMerchant } from '../src/net/post';
import { webhookHeaders } from '../src/webhooks/signing';
import type { WorkerMetrics } from '../src/platform/metrics';

export interface WebhookConfig {
  masterKey: string;
  timeoutMs: number;
  allowPrivateUrls: boolean;
  delaysSeconds: number[];
  windowSeconds: number;
  /** How host names are resolved for delivery; the system resolver unless a test replaces it. */
  resolve?: Resolver;
  /** Counts attempts and give-ups (docs/operations.md, metrics). */
  metrics?: Pick<WorkerMetrics, 'webhookAttempts' | 'webhooksUndelivered'>;
}

export interface RecordedEvent {
  eventId: string;
  delaysSeconds: number[];
  windowSeconds: number;
}

/** An event recorded and its first attempt made: whether the merchant took it, and what went wrong if not. */
export interface FirstAttempt extends RecordedEvent {
  delivered: boolean;
  error: string | null;
}

type EventRow = typeof webhookEvents.$inferSelect;

export function webhookActivities(db: Db, config: WebhookConfig) {
  const scheduled = (eventId: string): RecordedEvent => ({
    eventId,
    delaysSeconds: config.delaysSeconds,
    windowSeconds: config.windowSeconds,
  });

  /**
   * Fixes the event's body (the status body now, plus `event_id`). One event per (transaction, key): a
   * retry finds the same event. Undefined when the transaction has no webhook URL.
   */
  async function recordEvent(input: {
    transactionId: string;
    eventKey: string;
  }): Promise<EventRow | undefined> {
    const [row] = await db.select().from(transactions).where(eq(transactions.id, input.transactionId));
    if (!row) throw new Error(`transaction ${input.transactionId} not found`);
    if (!row.webhookUrl) return undefined;
    const eventId = newId('evt');
    const [inserted] = await db
      .insert(webhookEvents)
      .values({
        id: eventId,
        transactionId: row.id,
        merchantId: row.merchantId,
        mode: row.mode,
        eventKey: input.eventKey,
        url: row.webhookUrl,
        body: stringifyExact({ ...transactionBody(row), event_id: eventId }),
      })
      .onConflictDoNothing({ target: [webhookEvents.transactionId, webhookEvents.eventKey] })
      .returning();
    if (inserted) return inserted;
    const [existing] = await db
      .select()
      .from(webhookEvents)
      .where(and(eq(webhookEvents.transactionId, row.id), eq(webhookEvents.eventKey, input.eventKey)));
    return existing;
  }

  /**
   * One delivery attempt, recorded whatever happens, in one statement: the attempt, the event's count of
   * attempts (once per attempt, whatever retries), and with `recordDelivery` the event delivered.
   */
  async function attempt(
    event: EventRow,
    input: { run: number; attempt: number; recordDelivery?: boolean | undefined },
  ): Promise<{ delivered: boolean; error: string | null }> {
    const startedAt = new Date();
    const started = performance.now();
    let httpStatus: number | null = null;
    let error: string | null = null;
    const secret = await merchantWebhookSecret(db, config.masterKey, event.merchantId);
    try {
      httpStatus = await postToMerchant(event.url, {
        headers: webhookHeaders(event.body, secret, event.id, Math.floor(Date.now() / 1000)),
        body: event.body,
        timeoutMs: config.timeoutMs,
        policy: { mode: event.mode, allowPrivate: config.allowPrivateUrls, resolve: config.resolve },
      });
      if (httpStatus < 200 || httpStatus > 299) error = `HTTP ${httpStatus}`;
    } catch (cause) {
      error =
        cause instanceof PrivateAddressError
          ? 'webhook_url resolves to a private or loopback address'
          : cause instanceof PostTimeoutError
            ? 'timed out'
            : 'connection failed';
    }
    const latencyMs = Math.round(performance.now() - started);
    const delivered = error === null && input.recordDelivery === true;
    // `xmax = 0`: the attempt's row is new (a retry of this step updates it instead).
    await db.execute(sql`
      with attempt as (
        insert into ${webhookAttempts} (event_id, run, attempt, started_at, http_status, latency_ms, error)
        values (${event.id}, ${input.run}, ${input.attempt}, ${startedAt}, ${httpStatus}, ${latencyMs}, ${error})
        on conflict (event_id, run, attempt) do update
          set started_at = excluded.started_at, http_status = excluded.http_status,
              latency_ms = excluded.latency_ms, error = excluded.error
        returning (xmax = 0) as inserted
      )
      update ${webhookEvents}
      set attempts = attempts + (select case when inserted then 1 else 0 end from attempt)
        ${delivered ? sql`, status = 'delivered', delivered_at = now()` : sql``}
      where id = ${event.id}`);
    config.metrics?.webhookAttempts.inc({ outcome: error === null ? 'delivered' : 'failed' });
    return { delivered: error === null, error };
  }

  return {
    /** Records the webhook event `eventKey` of a transaction (see `recordEvent`); null without a URL. */
    async recordWebhookEvent(input: {
      transactionId: string;
      eventKey: string;
    }): Promise<RecordedEvent | null> {
      const event = await recordEvent(input);
      return event ? scheduled(event.id) : null;
    },

    /**
     * Records the event `eventKey` of a transaction and makes its first attempt (run 0, attempt 1), in one
     * step of the transaction's own workflow: a delivery workflow starts only when that attempt fails. A
     * retry of this step after the event was delivered does not send it again. Null when the transaction
     * has no webhook URL.
     */
    async recordAndDeliverWebhook(input: {
      transactionId: string;
      eventKey: string;
    }): Promise<FirstAttempt | null> {
      const event = await recordEvent(input);
      if (!event) return null;
      if (event.status === 'delivered') return { ...scheduled(event.id), delivered: true, error: null };
      const outcome = await attempt(event, { run: 0, attempt: 1, recordDelivery: true });
      return { ...scheduled(event.id), ...outcome };
    },

    /**
     * One delivery attempt, recorded whatever happens; `delivered` when the merchant answered 2xx in time.
     * With `recordDelivery`, a delivery also marks the event delivered in the same statement.
     */
    async deliverWebhook(input: {
      eventId: string;
      run: number;
      attempt: number;
      recordDelivery?: boolean;
    }): Promise<{ delivered: boolean; error: string | null }> {
      const [event] = await db.select().from(webhookEvents).where(eq(webhookEvents.id, input.eventId));
      if (!event) throw new Error(`webhook event ${input.eventId} not found`);
      return attempt(event, input);
    },

    async finishWebhookEvent(input: { eventId: string; status: 'delivered' | 'undelivered' }): Promise<void> {
      await db
        .update(webhookEvents)
        .set({ status: input.status, deliveredAt: input.status === 'delivered' ? new Date() : null })
        .where(eq(webhookEvents.id, input.eventId));
      if (input.status === 'undelivered') config.metrics?.webhooksUndelivered.inc();
    },
  };
}
