/**
 * The webhook events' writes against a test database: a delivery's outcome, written by the delivery
 * workflow's own step, stays on its row's page (a HOT update: no entry in any index, the old version pruned
 * on the page), since no index reads the event's status (docs/capacity.md, the service's PostgreSQL).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { transactions, webhookEvents } from '../../src/db/schema/index';
import { createMerchant } from '../../src/merchants/accounts';
import { webhookActivities } from '../../activities/webhooks';
import type { Db } from '../../src/db/client';
import { databaseForFile } from '../helpers/env';

const db = databaseForFile(2);

/** A transaction and its SUCCESS event, waiting for its delivery's outcome. */
async function pendingEvent(): Promise<string> {
  const merchant = await createMerchant(db().db, randomBytes(32).toString('hex'), {
    name: 'Webhooks',
    wallets: [],
    terminals: [],
  });
  const transactionId = `PA${randomBytes(8).toString('hex')}`;
  await db()
    .db.insert(transactions)
    .values({
      id: transactionId,
      merchantId: merchant.merchant_id,
      mode: 'test',
      kind: 'card',
      requestHash: 'hash',
      message: 'Approved',
      status: 'SUCCESS',
      currency: 'USD',
      amountMinor: 1_000n,
      customer: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
    });
  const eventId = `EV${randomBytes(8).toString('hex')}`;
  await db()
    .db.insert(webhookEvents)
    .values({
      id: eventId,
      transactionId,
      merchantId: merchant.merchant_id,
      mode: 'test',
      eventKey: 'status:SUCCESS',
      url: 'https://merchant.example/webhooks',
      body: JSON.stringify({ transaction_id: transactionId, status: 'SUCCESS' }),
      status: 'pending',
      run: 1,
    });
  return eventId;
}

/** Runs `write` in one database transaction and counts its updates of webhook_events, and the HOT ones. */
async function eventUpdates(write: (tx: Db) => Promise<unknown>) {
  // The counters also hold the connection's earlier transactions not yet reported: the difference counts.
  const counters = async (tx: Db) => {
    const { rows } = await tx.execute<{ updated: number; hot: number }>(sql`
      select pg_stat_get_xact_tuples_updated('webhook_events'::regclass)::int as updated,
        pg_stat_get_xact_tuples_hot_updated('webhook_events'::regclass)::int as hot`);
    return rows[0]!;
  };
  return db().db.transaction(async (tx) => {
    const before = await counters(tx);
    await write(tx);
    const after = await counters(tx);
    return { updated: after.updated - before.updated, hot: after.hot - before.hot };
  });
}

const finish = (tx: Db) =>
  webhookActivities(tx, {
    masterKey: randomBytes(32).toString('hex'),
    timeoutMs: 1_000,
    allowPrivateUrls: false,
    delaysSeconds: [],
    windowSeconds: 60,
  }).finishWebhookEvent;

describe('webhook events in PostgreSQL', () => {
  it.each(['delivered', 'undelivered'] as const)('writes a delivery %s in place', async (status) => {
    const eventId = await pendingEvent();
    expect(await eventUpdates((tx) => finish(tx)({ eventId, status, run: 1 }))).toEqual({
      updated: 1,
      hot: 1,
    });
    const [event] = await db().db.select().from(webhookEvents).where(eq(webhookEvents.id, eventId));
    expect(event!.status).toBe(status);
  });
});
