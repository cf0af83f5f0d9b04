/**
 * The projection's writes against a test database: a write that leaves a transaction's status as it was,
 * and a webhook event's delivery, stay on their row's page (HOT updates, without an entry in any B-tree
 * index), and the reads those indexes are for still use them (docs/capacity.md, the service's PostgreSQL).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sql, type SQL } from 'drizzle-orm';
import { transactions, webhookEvents } from '../../src/db/schema/index';
import { createMerchant } from '../../src/merchants/accounts';
import { cardPaidBefore } from '../../src/transactions/card-vault';
import type { Db } from '../../src/db/client';
import { databaseForFile } from '../helpers/env';

const db = databaseForFile(2);

async function merchantId(): Promise<string> {
  const merchant = await createMerchant(db().db, randomBytes(32).toString('hex'), {
    name: 'Projection',
    wallets: [],
    terminals: [],
  });
  return merchant.merchant_id;
}

async function transactionOf(merchant: string, fingerprint: string | null = null): Promise<string> {
  const id = `PA${randomBytes(8).toString('hex')}`;
  await db()
    .db.insert(transactions)
    .values({
      id,
      merchantId: merchant,
      mode: 'test',
      kind: 'card',
      requestHash: 'hash',
      message: 'Pending',
      currency: 'USD',
      amountMinor: 1_000n,
      customer: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
      cardFingerprint: fingerprint,
    });
  return id;
}

/** Runs `write` in a database transaction and counts its updates of `table`, and how many were HOT. */
async function updatesOf(table: string, write: (tx: Db) => Promise<unknown>) {
  // The counters also hold the connection's earlier transactions not yet reported: the difference counts.
  const counters = async (tx: Db) => {
    const { rows } = await tx.execute<{ updated: number; hot: number }>(sql`
      select pg_stat_get_xact_tuples_updated(${table}::regclass)::int as updated,
        pg_stat_get_xact_tuples_hot_updated(${table}::regclass)::int as hot`);
    return rows[0]!;
  };
  return db().db.transaction(async (tx) => {
    const before = await counters(tx);
    await write(tx);
    const after = await counters(tx);
    return { updated: after.updated - before.updated, hot: after.hot - before.hot };
  });
}

/** The indexes the planner reads for `query` when it is told not to read the whole table. */
async function indexesFor(query: SQL): Promise<string[]> {
  return db().db.transaction(async (tx) => {
    await tx.execute(sql`set local enable_seqscan = off`);
    const { rows } = await tx.execute<{ 'QUERY PLAN': string }>(sql`explain ${query}`);
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    return [...plan.matchAll(/(?:using|Index Scan on) (\w+)/g)].map((m) => m[1]!);
  });
}

describe('the projection in PostgreSQL', () => {
  it('writes a transaction whose status stays, and delivers a webhook event, in place', async () => {
    const merchant = await merchantId();
    const id = await transactionOf(merchant);
    // What a projection write without a new status sets: message, version, its run and updated_at.
    expect(
      await updatesOf('transactions', (tx) =>
        tx.execute(sql`update transactions set message = 'Still pending', version = 1,
          status_run_id = 'run', updated_at = now() + interval '1 second' where id = ${id}`),
      ),
    ).toEqual({ updated: 1, hot: 1 });
    // The card entered on a hosted page: its fingerprint is indexed, so that write is not in place.
    expect(
      await updatesOf('transactions', (tx) =>
        tx.execute(sql`update transactions set card_fingerprint = 'fp' where id = ${id}`),
      ),
    ).toEqual({ updated: 1, hot: 0 });

    await db()
      .db.insert(webhookEvents)
      .values({
        id: `EV${randomBytes(8).toString('hex')}`,
        transactionId: id,
        merchantId: merchant,
        mode: 'test',
        eventKey: 'status:SUCCESS',
        url: 'https://merchant.example/webhooks',
        body: '{}',
      });
    expect(
      await updatesOf('webhook_events', (tx) =>
        tx.execute(sql`update webhook_events set status = 'delivered', delivered_at = now(), attempts = 1
          where transaction_id = ${id}`),
      ),
    ).toEqual({ updated: 1, hot: 1 });
  });

  it('still reads a window of changes and a card paid before through their indexes', async () => {
    const merchant = await merchantId();
    await transactionOf(merchant, 'fp-paid');
    await transactionOf(merchant);
    const from = new Date(Date.now() - 60_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    expect(
      await indexesFor(
        sql`select id from transactions where updated_at >= ${from}::timestamptz and updated_at < ${to}::timestamptz`,
      ),
    ).toEqual(['transactions_updated_idx']);
    expect(
      await indexesFor(
        sql`select ${cardPaidBefore({ merchantId: merchant, mode: 'test' }, 'fp-paid')} as paid`,
      ),
    ).toContain('transactions_fingerprint_idx');
  });
});
