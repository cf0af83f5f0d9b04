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

export function webhookActivities(db: Db, config: WebhookConfig) {
  return {
    /**
     * Fixes the event's body (the status body now, plus `event_id`). One event per (transaction, key):
     * a retry returns the same event. Null when the transaction has no webhook URL.
     */
    async recordWebhookEvent(input: {
      transactionId: string;
      eventKey: string;
    }): Promise<RecordedEvent | null> {
      const [row] = await db.select().from(transactions).where(eq(transactions.id, input.transactionId));
      if (!row) throw new Error(`transaction ${input.transactionId} not found`);
      if (!row.webhookUrl) return null;
      const eventId = newId('evt');
      const body = stringifyExact({ ...transactionBody(row), event_id: eventId });
      await db
        .insert(webhookEvents)
        .values({
          id: eventId,
          transactionId: row.id,
          merchantId: row.merchantId,
          mode: row.mode,
          eventKey: input.eventKey,
          url: row.webhookUrl,
          body,
        })
        .onConflictDoNothing({ target: [webhookEvents.transactionId, webhookEvents.eventKey] });
      const [event] = await db
        .select({ id: webhookEvents.id })
        .from(webhookEvents)
        .where(and(eq(webhookEvents.transactionId, row.id), eq(webhookEvents.eventKey, input.eventKey)));
      return { eventId: event!.id, delaysSeconds: config.delaysSeconds, windowSeconds: config.windowSeconds };
    },

    /**
     * One delivery attempt, recorded whatever happens; `delivered` when the merchant answered 2xx in time.
     * With `recordDelivery`, a delivery also marks the event delivered in the same database transaction.
     */
    async deliverWebhook(input: {
      eventId: string;
      run: number;
      attempt: number;
      recordDelivery?: boolean;
    }): Promise<{ delivered: boolean; error: string | null }> {
      const [event] = await db.select().from(webhookEvents).where(eq(webhookEvents.id, input.eventId));
      if (!event) throw new Error(`webhook event ${input.eventId} not found`);
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
      await db.transaction(async (tx) => {
        const inserted = await tx
          .insert(webhookAttempts)
          .values({
            eventId: event.id,
            run: input.run,
            attempt: input.attempt,
            startedAt,
            httpStatus,
            latencyMs,
            error,
          })
          .onConflictDoUpdate({
            target: [webhookAttempts.eventId, webhookAttempts.run, webhookAttempts.attempt],
            set: { startedAt, httpStatus, latencyMs, error },
          })
          .returning({ inserted: sql<boolean>`xmax = 0` });
        const delivered = error === null && input.recordDelivery === true;
        if (inserted[0]?.inserted || delivered) {
          await tx
            .update(webhookEvents)
            .set({
              ...(inserted[0]?.inserted ? { attempts: sql`${webhookEvents.attempts} + 1` } : {}),
              ...(delivered ? { status: 'delivered' as const, deliveredAt: new Date() } : {}),
            })
            .where(eq(webhookEvents.id, event.id));
        }
      });
      config.metrics?.webhookAttempts.inc({ outcome: error === null ? 'delivered' : 'failed' });
      return { delivered: error === null, error };
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
