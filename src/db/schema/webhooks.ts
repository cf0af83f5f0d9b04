import { bigserial, index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { MODES } from '../../lib/vocabulary';

/** One event per transaction change worth telling the merchant about; its body is fixed when it is made. */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: text('id').primaryKey(),
    transactionId: text('transaction_id').notNull(),
    merchantId: text('merchant_id').notNull(),
    mode: text('mode', { enum: MODES }).notNull(),
    /** What the event is about, e.g. `status:SUCCESS`; unique per transaction so a retry adds nothing. */
    eventKey: text('event_key').notNull(),
    url: text('url').notNull(),
    body: text('body').notNull(),
    status: text('status', { enum: ['pending', 'delivered', 'undelivered'] })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /**
     * The latest delivery run begun (0, then one per redelivery): a run older than it no longer gives the
     * event up, and no run takes back `delivered` (docs/webhooks.md).
     */
    run: integer('run').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('webhook_events_key_idx').on(t.transactionId, t.eventKey),
    // The merchant's event log: newest first, the id breaking ties.
    index('webhook_events_log_idx').on(t.merchantId, t.mode, t.createdAt, t.id),
  ],
);

export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    eventId: text('event_id')
      .notNull()
      .references(() => webhookEvents.id),
    /** Which delivery run made the attempt: 0 for the first, then one per redelivery. */
    run: integer('run').notNull(),
    attempt: integer('attempt').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    httpStatus: integer('http_status'),
    latencyMs: integer('latency_ms').notNull(),
    error: text('error'),
  },
  (t) => [uniqueIndex('webhook_attempts_unique_idx').on(t.eventId, t.run, t.attempt)],
);
