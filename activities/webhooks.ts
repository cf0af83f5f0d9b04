import { Context } from '@temporalio/activity';
import { and, eq, getTableColumns, inArray, isNull, lte, sql } from 'drizzle-orm';
import type { Db } from '../src/db/client';
import { transactions, webhookAttempts, webhookEvents, webhookSecrets } from '../src/db/schema/index';
import { newId } from '../src/ciphers/ids';
import { transactionBody } from '../src/transactions/view';
import { eventTypeOf } from '../src/transactions/webhook-events';
import { stringifyExact } from '../src/lib/json';
import { decryptSecret } from '../src/ciphers/secrets';
import { TtlCache } from '../src/lib/ttl-cache';
import { PrivateAddressError, type Resolver } from '../src/net/address-policy';
import { MerchantConnections, PostTimeoutError, postToMerchant } from '../src/net/post';
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

/** An event with what signs it: the merchant's webhook secrets valid now, encrypted, newest first. */
type SignedEvent = typeof webhookEvents.$inferSelect & { secrets: string[] };

/**
 * The merchant's valid webhook secrets (encrypted, newest first), read by the statement that reads the event
 * or the transaction (`table`, whose `merchant_id` names the merchant: written out in full, since a bare
 * column name inside the sub-select would be the secrets' own).
 */
function validSecretsOf(table: 'transactions' | 'webhook_events') {
  return sql<string[]>`(select coalesce(array_agg(s.secret_enc order by s.created_at desc, s.id desc), '{}')
    from ${webhookSecrets} s
    where s.merchant_id = ${sql.raw(`"${table}"."merchant_id"`)}
      and (s.expires_at is null or s.expires_at > now()))`;
}

/** Attempts in flight at once to one merchant endpoint (its origin), and over a whole batch. */
const PER_ENDPOINT = 8;
const PER_BATCH = 32;

export function webhookActivities(db: Db, config: WebhookConfig) {
  // The merchant's valid webhook secrets are read with the event, by the same statement, at every attempt:
  // a rotation (docs/webhooks.md) signs the next webhook. Only their decryption is kept, by ciphertext.
  const decrypted = new TtlCache<string, string>(60 * 60_000, 10_000);
  // Kept open between attempts to the same endpoint (src/net/post.ts).
  const connections = new MerchantConnections();
  const secretsOf = (event: { secrets: string[] }): string[] =>
    event.secrets.map((secretEnc) => {
      const cached = decrypted.get(secretEnc);
      if (cached !== undefined) return cached;
      const secret = decryptSecret(secretEnc, config.masterKey);
      decrypted.set(secretEnc, secret);
      return secret;
    });
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
  }): Promise<SignedEvent | undefined> {
    const [found] = await db
      .select({ row: transactions, secrets: validSecretsOf('transactions') })
      .from(transactions)
      .where(eq(transactions.id, input.transactionId));
    if (!found) throw new Error(`transaction ${input.transactionId} not found`);
    const { row, secrets } = found;
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
        body: stringifyExact({
          ...transactionBody(row),
          event_id: eventId,
          event_type: eventTypeOf(input.eventKey),
        }),
      })
      .onConflictDoNothing({ target: [webhookEvents.transactionId, webhookEvents.eventKey] })
      .returning();
    if (inserted) return { ...inserted, secrets };
    const [existing] = await db
      .select()
      .from(webhookEvents)
      .where(and(eq(webhookEvents.transactionId, row.id), eq(webhookEvents.eventKey, input.eventKey)));
    return existing && { ...existing, secrets };
  }

  /**
   * One delivery attempt, recorded whatever happens, in one statement: the attempt, the event's count of
   * attempts (once per attempt, whatever retries), and with `recordDelivery` the event delivered.
   */
  async function attempt(
    event: SignedEvent,
    input: { run: number; attempt: number; recordDelivery?: boolean | undefined },
  ): Promise<{ delivered: boolean; error: string | null }> {
    const startedAt = new Date();
    const started = performance.now();
    let httpStatus: number | null = null;
    let error: string | null = null;
    try {
      httpStatus = await postToMerchant(event.url, {
        headers: webhookHeaders(event.body, secretsOf(event), event.id, Math.floor(Date.now() / 1000)),
        body: event.body,
        timeoutMs: config.timeoutMs,
        policy: { mode: event.mode, allowPrivate: config.allowPrivateUrls, resolve: config.resolve },
        connections,
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
      const [event] = await db
        .select({ ...getTableColumns(webhookEvents), secrets: validSecretsOf('webhook_events') })
        .from(webhookEvents)
        .where(eq(webhookEvents.id, input.eventId));
      if (!event) throw new Error(`webhook event ${input.eventId} not found`);
      // Delivered meanwhile (by a redelivery, or by this run's own attempt whose answer was lost): the
      // merchant has it, so this run's retries stop here.
      if (event.status === 'delivered') return { delivered: true, error: null };
      return attempt(event, input);
    },

    /**
     * The first attempt of many redelivery runs at once (at most PER_ENDPOINT to one endpoint and PER_BATCH
     * in all), each recorded as `deliverWebhook` records it. A retry of this step does not send again an
     * event whose attempt was taken. Answers each run's outcome, in the order given.
     */
    async deliverWebhooks(input: {
      runs: { eventId: string; run: number }[];
    }): Promise<{ eventId: string; run: number; delivered: boolean; error: string | null }[]> {
      const ids = [...new Set(input.runs.map((r) => r.eventId))];
      const events = new Map(
        (
          await db
            .select({ ...getTableColumns(webhookEvents), secrets: validSecretsOf('webhook_events') })
            .from(webhookEvents)
            .where(inArray(webhookEvents.id, ids))
        ).map((e) => [e.id, e]),
      );
      const taken = new Set(
        (
          await db
            .select({ eventId: webhookAttempts.eventId, run: webhookAttempts.run })
            .from(webhookAttempts)
            .where(
              and(
                inArray(webhookAttempts.eventId, ids),
                eq(webhookAttempts.attempt, 1),
                isNull(webhookAttempts.error),
              ),
            )
        ).map(runKey),
      );
      // Taken before a retry of this step, or by an earlier batch: delivered, whatever a redelivery since set.
      const takenIds = [...new Set(input.runs.filter((run) => taken.has(runKey(run))).map((r) => r.eventId))];
      if (takenIds.length > 0)
        await db
          .update(webhookEvents)
          .set({ status: 'delivered', deliveredAt: sql`coalesce(${webhookEvents.deliveredAt}, now())` })
          .where(inArray(webhookEvents.id, takenIds));
      const outcomes = await limited(
        input.runs,
        (run) => {
          const event = events.get(run.eventId);
          if (!event) throw new Error(`webhook event ${run.eventId} not found`);
          return originOf(event.url);
        },
        async (run) => {
          const event = events.get(run.eventId)!;
          const outcome = taken.has(runKey(run))
            ? { delivered: true, error: null }
            : await attempt(event, { run: run.run, attempt: 1, recordDelivery: true });
          Context.current().heartbeat();
          return { ...run, ...outcome };
        },
      );
      return outcomes;
    },

    /**
     * Ends a delivery run: `delivered` always stands; `undelivered` only over a pending event whose latest
     * run is this one (a redelivery begun since, or a delivery made meanwhile, is never undone). `run` is
     * absent in histories from before runs were compared: run 0.
     */
    async finishWebhookEvent(input: {
      eventId: string;
      status: 'delivered' | 'undelivered';
      run?: number;
    }): Promise<void> {
      if (input.status === 'delivered') {
        await db
          .update(webhookEvents)
          .set({ status: 'delivered', deliveredAt: sql`coalesce(${webhookEvents.deliveredAt}, now())` })
          .where(eq(webhookEvents.id, input.eventId));
        return;
      }
      const given = await db
        .update(webhookEvents)
        .set({ status: 'undelivered', deliveredAt: null })
        .where(
          and(
            eq(webhookEvents.id, input.eventId),
            eq(webhookEvents.status, 'pending'),
            lte(webhookEvents.run, input.run ?? 0),
          ),
        )
        .returning({ id: webhookEvents.id });
      if (given.length > 0) config.metrics?.webhooksUndelivered.inc();
    },
  };
}

/** One delivery run of one event, as a set key. */
const runKey = (run: { eventId: string; run: number }) => `${run.eventId}:${run.run}`;

/** The endpoint an attempt goes to, for the per-endpoint limit. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/**
 * Runs `work` over `items`, at most PER_BATCH at once and PER_ENDPOINT per key; results in input order.
 */
async function limited<T, R>(
  items: T[],
  keyOf: (item: T) => string,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  const busy = new Map<string, number>();
  const waiting = items.map((item, index) => ({ item, index, key: keyOf(item) }));
  let running = 0;
  return new Promise<R[]>((resolve, reject) => {
    let failed = false;
    const next = () => {
      if (failed) return;
      if (waiting.length === 0 && running === 0) return resolve(results);
      for (let i = 0; i < waiting.length && running < PER_BATCH;) {
        const job = waiting[i]!;
        if ((busy.get(job.key) ?? 0) >= PER_ENDPOINT) {
          i += 1;
          continue;
        }
        waiting.splice(i, 1);
        running += 1;
        busy.set(job.key, (busy.get(job.key) ?? 0) + 1);
        work(job.item).then(
          (result) => {
            results[job.index] = result;
            running -= 1;
            busy.set(job.key, busy.get(job.key)! - 1);
            next();
          },
          (error: unknown) => {
            failed = true;
            reject(error);
          },
        );
      }
    };
    next();
  });
}
