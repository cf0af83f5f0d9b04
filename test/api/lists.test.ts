import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import {
  cardRequest,
  merchantClient,
  payinRequest,
  payoutRequest,
  type MerchantClient,
} from '../helpers/merchant-client';
import { sql } from 'drizzle-orm';
import { transactions } from '../../src/db/schema/index';
import { newTransactionId } from '../../src/ciphers/ids';
import { decodeCursor, encodeCursor } from '../../src/transactions/paging';

let env: TestEnv;
let alice: MerchantClient;
let bob: MerchantClient;
/** Alice's bulk rows, oldest first. */
const existing: string[] = [];

/** Rows written straight to the projection: 1,000 in ten minutes, several sharing a timestamp. */
/** `variant` picks the kind and status pattern's starting point (1: a successful card). */
async function insertBulk(
  merchant: MerchantClient,
  count: number,
  start: Date,
  variant = 0,
): Promise<string[]> {
  const rows = Array.from({ length: count }, (_, i) => ({
    id: newTransactionId(),
    merchantId: merchant.credentials.merchant_id,
    mode: 'test' as const,
    kind: (i + variant) % 3 === 0 ? ('payout' as const) : ('card' as const),
    status: (i + variant) % 4 === 0 ? ('FAILED' as const) : ('SUCCESS' as const),
    requestHash: 'fixture',
    message: 'Transaction processed successfully.',
    amountMinor: BigInt(100 + i),
    currency: 'USD',
    customer: { first_name: 'Jane', last_name: 'Doe', email: 'jane@example.com' },
    country: 'US',
    cardBin: '424242',
    cardLast4: '4242',
    // Three rows per millisecond-free second: ties on created_at are broken by the id.
    createdAt: new Date(start.getTime() + Math.floor(i / 3) * 1000),
  }));
  for (let i = 0; i < rows.length; i += 250)
    await env.database.db.insert(transactions).values(rows.slice(i, i + 250));
  return rows.map((r) => r.id);
}

beforeAll(async () => {
  env = await startTestEnv();
  alice = merchantClient(env.app, await env.createMerchant());
  bob = merchantClient(env.app, await env.createMerchant());
  existing.push(...(await insertBulk(alice, 1000, new Date('2026-01-05T10:00:00Z'))));
  await insertBulk(bob, 10, new Date('2026-01-05T10:00:00Z'));
});
afterAll(() => env?.close());

type ListBody = {
  data: {
    transaction_id: string;
    card_number: string | null;
    wallet_id?: string;
    transaction_type?: string;
  }[];
  meta: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    nextCursor?: string;
    prevCursor?: string;
    totalCount: number;
  };
};
const list = async (client: MerchantClient, query: string, path = '/api/v1/test-transactions') => {
  const response = await client.get(`${path}?${query}`);
  return {
    status: response.statusCode,
    body: response.json() as ListBody & { message: string; errors?: Record<string, string[]> },
  };
};

describe('GET /api/v1/{test|live}-transactions', () => {
  it('pages through 1,000 transactions while new ones arrive, each exactly once, newest first', async () => {
    const seen: string[] = [];
    let query = 'transaction_start_date=2026-01-05&transaction_end_date=2026-01-05&limit=37';
    let first = true;
    for (;;) {
      const page = await list(alice, query);
      expect(page.status).toBe(200);
      expect(page.body.meta.totalCount).toBe(first ? 1000 : page.body.meta.totalCount);
      expect(page.body.meta.hasPreviousPage).toBe(!first);
      first = false;
      seen.push(...page.body.data.map((t) => t.transaction_id));
      // A new transaction arrives on the listed day after every page: it comes before the first
      // page, never inside the pages still to read.
      await insertBulk(alice, 1, new Date('2026-01-05T23:59:59Z'), 1);
      if (!page.body.meta.hasNextPage) break;
      query = `transaction_start_date=2026-01-05&transaction_end_date=2026-01-05&limit=37&nextCursor=${encodeURIComponent(page.body.meta.nextCursor!)}`;
    }
    expect(seen).toHaveLength(1000);
    expect(new Set(seen).size).toBe(1000);
    expect([...seen].sort()).toEqual([...existing].sort());
    // Newest first: the last bulk row is alone in its second; the three before it share one, in id order.
    expect(seen[0]).toBe(existing[999]);
    expect(seen.slice(1, 4).sort()).toEqual(existing.slice(996, 999).sort());
  });

  it('goes back with prevCursor to the same page', async () => {
    const one = await list(alice, 'transaction_end_date=2026-01-05&limit=5');
    const two = await list(
      alice,
      `transaction_end_date=2026-01-05&limit=5&nextCursor=${encodeURIComponent(one.body.meta.nextCursor!)}`,
    );
    expect(two.body.meta.hasPreviousPage).toBe(true);
    const back = await list(
      alice,
      `transaction_end_date=2026-01-05&limit=5&prevCursor=${encodeURIComponent(two.body.meta.prevCursor!)}`,
    );
    expect(back.body.data.map((t) => t.transaction_id)).toEqual(one.body.data.map((t) => t.transaction_id));
    expect(back.body.meta.hasNextPage).toBe(true);
  });

  it('pages rows a microsecond apart one at a time, and takes a cursor issued before in any zone', async () => {
    const dave = merchantClient(env.app, await env.createMerchant());
    const ids = await insertBulk(dave, 3, new Date('2026-04-01T10:00:00Z'));
    // Three rows within one millisecond: a cursor cut to the millisecond would skip the two after the first.
    for (const [i, at] of ['10:00:00.123456', '10:00:00.123457', '10:00:00.123458'].entries()) {
      await env.database.db.execute(sql`
        update transactions set created_at = ${`2026-04-01 ${at}+00`}::timestamptz where id = ${ids[i]!}`);
    }
    const paged: string[] = [];
    const cursors: string[] = [];
    let query = 'limit=1';
    for (;;) {
      const page = await list(dave, query);
      expect(page.status).toBe(200);
      paged.push(...page.body.data.map((t) => t.transaction_id));
      if (!page.body.meta.hasNextPage) break;
      cursors.push(page.body.meta.nextCursor!);
      query = `limit=1&nextCursor=${encodeURIComponent(page.body.meta.nextCursor!)}`;
    }
    expect(paged).toEqual([ids[2], ids[1], ids[0]]);
    // Until 2026-12-05 a cursor held Postgres's own text of the time, in the session's zone.
    const scope = { list: 'transactions', merchantId: dave.credentials.merchant_id, mode: 'test' as const };
    const now = decodeCursor(env.config.MASTER_KEY, scope, cursors[0]!);
    expect(now).toEqual({ id: ids[2], at: '2026-04-01T10:00:00.123458Z' });
    const before = encodeCursor(env.config.MASTER_KEY, scope, {
      at: '2026-04-01 15:30:00.123458+05:30',
      id: ids[2]!,
    });
    const next = await list(dave, `limit=1&nextCursor=${encodeURIComponent(before)}`);
    expect(next.status).toBe(200);
    expect(next.body.data.map((t) => t.transaction_id)).toEqual([ids[1]]);
  });

  it("refuses one merchant's cursor to another, and a forged one, and shows nothing of the first", async () => {
    const page = await list(alice, 'limit=5');
    const cursor = encodeURIComponent(page.body.meta.nextCursor!);
    const stolen = await list(bob, `limit=5&nextCursor=${cursor}`);
    expect(stolen.status).toBe(422);
    expect(stolen.body.message).toBe('The nextCursor is not a cursor of this list.');
    expect(JSON.stringify(stolen.body)).not.toContain(page.body.data[0]!.transaction_id);
    const [payload, mac] = page.body.meta.nextCursor!.split('.');
    const forged = Buffer.from(JSON.stringify(['2099-01-01 00:00:00+00', 'PAx'])).toString('base64url');
    for (const bad of [`${forged}.${mac}`, `${payload}.${'0'.repeat(32)}`, 'garbage']) {
      expect((await list(alice, `nextCursor=${encodeURIComponent(bad)}`)).status).toBe(422);
    }
    // Bob's own list holds only Bob's rows.
    const bobs = await list(bob, 'limit=100');
    expect(bobs.body.meta.totalCount).toBe(10);
    expect(bobs.body.data.every((t) => !existing.includes(t.transaction_id))).toBe(true);
  });

  it("answers the SDK's Transaction fields, the card number masked, and filters", async () => {
    const created = await alice.post(
      '/api/v1/test/card',
      cardRequest({ order_id: 'list-1', card_number: '5555555555554444' }),
    );
    const id = created.json().data.transaction_id;
    const page = await list(alice, 'order_id=list-1');
    expect(page.body.data).toEqual([
      {
        first_name: 'Jane',
        last_name: 'Doe',
        converted_amount: '1050',
        converted_currency: 'USD',
        transaction_id: id,
        amount: '1050',
        currency: 'USD',
        status: 'REDIRECT',
        card_type: 'MASTERCARD',
        card_number: '555555******4444',
        transaction_type: 'card',
        order_id: 'list-1',
        country: expect.any(String),
        email: expect.any(String),
        created_at: expect.stringMatching(/Z$/),
        transaction_date: expect.stringMatching(/Z$/),
        chargeback_date: null,
        refund_date: null,
        suspicious_date: null,
        merchant_connector: { name: 'sandbox-acquirer' },
        payment_link_id: null,
        user: { name: expect.any(String), user_kyc: { name: expect.any(String) } },
      },
    ]);
    expect(JSON.stringify(page.body)).not.toContain('5555555555554444');

    // A payin names the chain connector that serves it (no node registered here: the sandbox's).
    await alice.post('/api/v1/test/crypto/payin', payinRequest({ order_id: 'list-payin' }));
    const payin = await list(alice, 'order_id=list-payin');
    expect(payin.body.data).toEqual([
      expect.objectContaining({
        transaction_type: 'crypto_payin',
        merchant_connector: { name: 'sandbox-crypto' },
      }),
    ]);

    const failedPayouts = await list(
      alice,
      'status=FAILED&transaction_type=payout&transaction_end_date=2026-01-05&limit=100',
    );
    // Of the 1,000: every third is a payout, every fourth failed; both when i is a multiple of 12.
    expect(failedPayouts.body.meta.totalCount).toBe(84);
    expect((await list(alice, 'status=LOST')).status).toBe(422);
    expect((await list(alice, 'limit=101')).status).toBe(422);
    for (const day of [
      '2026-13-01',
      '2026-02-30',
      '2026-04-31',
      '0000-01-01',
      '2026-1-05',
      '2026-11-24T00:00:00Z',
    ])
      for (const path of ['/api/v1/test-transactions', '/api/v1/test-wallet-transactions']) {
        const refused = await list(alice, `transaction_start_date=${day}`, path);
        expect(refused.status).toBe(422);
        expect(refused.body).toMatchObject({
          message: 'The transaction start date field must be a calendar day that exists, as YYYY-MM-DD.',
        });
      }
    expect((await list(alice, 'transaction_end_date=2028-02-29')).status).toBe(200);
  });

  it('answers every page size alike, prepared or, past the cap on prepared shapes, planned per query', async () => {
    const first = await list(alice, 'transaction_end_date=2026-01-05&limit=100');
    const second = await list(
      alice,
      `transaction_end_date=2026-01-05&limit=100&nextCursor=${encodeURIComponent(first.body.meta.nextCursor!)}`,
    );
    const ids = [...first.body.data, ...second.body.data].map((t) => t.transaction_id);
    // 100 sizes in both directions and with a cursor: more shapes than are ever prepared.
    for (let size = 1; size <= 100; size++) {
      const page = await list(alice, `transaction_end_date=2026-01-05&limit=${size}`);
      expect(page.body.data.map((t) => t.transaction_id)).toEqual(ids.slice(0, size));
      const next = await list(
        alice,
        `transaction_end_date=2026-01-05&limit=${size}&nextCursor=${encodeURIComponent(page.body.meta.nextCursor!)}`,
      );
      expect(next.body.data.map((t) => t.transaction_id)).toEqual(ids.slice(size, 2 * size));
    }
  });

  it('writes each time as toISOString would: UTC, cut to the millisecond, never rounded up', async () => {
    const carol = merchantClient(env.app, await env.createMerchant());
    const ids = await insertBulk(carol, 4, new Date('2026-03-01T10:00:00Z'));
    // Microseconds a Date cannot hold, next to a second's and a day's edge; one refund and chargeback each.
    const times = [
      ['2026-03-01 10:00:00.999999+00', '2026-03-01 23:59:59.9999+00', '2026-03-02 00:00:00.0005+00', null],
      ['2026-03-01 10:00:01+00', '2026-03-01 10:00:01.000001+00', null, '2026-12-31 23:59:59.999999+00'],
      ['2026-03-01 10:00:02.1239+05', '2026-03-01 10:00:02.5+00', null, null],
      ['2026-03-01 10:00:03.000999+00', '2026-03-01 10:00:03.5004-03', '2026-03-01 12:00:00+00', null],
    ] as const;
    for (const [i, [created, updated, refunded, chargeback]] of times.entries()) {
      await env.database.db.execute(sql`
        update transactions set created_at = ${created}::timestamptz, updated_at = ${updated}::timestamptz,
          refunded_at = ${refunded}::timestamptz, chargeback_at = ${chargeback}::timestamptz
        where id = ${ids[i]!}`);
    }
    // What the list wrote before: Postgres's own text of each time, through a Date.
    const { rows } = await env.database.db.execute<Record<string, string | null>>(sql`
      select id, created_at::text as created, updated_at::text as updated, refunded_at::text as refunded,
        chargeback_at::text as chargeback
      from transactions where id in ${ids}`);
    expect(rows).toHaveLength(4);
    const viaDate = (text: string | null) => (text === null ? null : new Date(text).toISOString());
    const page = await list(carol, 'limit=10');
    expect(page.status).toBe(200);
    const items = page.body.data as unknown as Record<string, string | null>[];
    expect(items).toHaveLength(4);
    for (const row of rows) {
      const item = items.find((t) => t.transaction_id === row.id)!;
      expect({
        created_at: item.created_at,
        transaction_date: item.transaction_date,
        refund_date: item.refund_date,
        chargeback_date: item.chargeback_date,
      }).toEqual({
        created_at: viaDate(row.created!),
        transaction_date: viaDate(row.updated!),
        refund_date: viaDate(row.refunded!),
        chargeback_date: viaDate(row.chargeback!),
      });
    }
  });

  it("is the key's mode only", async () => {
    const answer = await alice.get('/api/v1/live-transactions', { key: alice.key('test') });
    expect(answer.statusCode).toBe(401);
    const live = await alice.get('/api/v1/live-transactions', { key: alice.key('live') });
    expect(live.statusCode).toBe(200);
    expect(live.json().meta.totalCount).toBe(0);
  });
});

describe('GET /api/v1/{test|live}-wallet-transactions', () => {
  it("pages the ledger entries of the key's wallets", async () => {
    const walletId = alice.credentials.wallets.find(
      (w) => w.mode === 'test' && w.currency === 'USD',
    )!.wallet_id;
    const paid = await alice.post('/api/v1/test/payout', payoutRequest(walletId));
    const id = paid.json().data.transaction_id;
    const page = await list(alice, `order_id=${id}`, '/api/v1/test-wallet-transactions');
    expect(page.status).toBe(200);
    expect(page.body.data.map((e) => e.transaction_id)).toEqual([id, id]);
    expect(page.body.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          wallet_id: walletId,
          transaction_type: 'reserve',
          amount: '-500',
          currency: 'USD',
        }),
        expect.objectContaining({ transaction_type: 'settle', amount: '0' }),
      ]),
    );
    const reserves = await list(
      alice,
      `transaction_type=reserve&wallet_id=${walletId}&limit=100`,
      '/api/v1/test-wallet-transactions',
    );
    expect(reserves.body.data.length).toBeGreaterThan(0);
    expect(
      reserves.body.data.every((e) => e.transaction_type === 'reserve' && e.wallet_id === walletId),
    ).toBe(true);
    const eur = alice.credentials.wallets.find((w) => w.mode === 'test' && w.currency !== 'USD')!.wallet_id;
    const elsewhere = await list(
      alice,
      `order_id=${id}&wallet_id=${eur}`,
      '/api/v1/test-wallet-transactions',
    );
    expect(elsewhere.body.data).toEqual([]);
    // Another merchant's wallet id shows nothing of it.
    const foreign = await list(bob, `wallet_id=${walletId}`, '/api/v1/test-wallet-transactions');
    expect(foreign.body).toMatchObject({ data: [], meta: { totalCount: 0 } });
    const byStatus = await list(alice, 'status=SUCCESS', '/api/v1/test-wallet-transactions');
    expect(byStatus.status).toBe(422);
    expect(byStatus.body).toMatchObject({
      message: 'Wallet transactions have no status; filter them by transaction_type (the ledger step).',
    });
    expect((await list(alice, 'transaction_type=card', '/api/v1/test-wallet-transactions')).status).toBe(422);

    const all = await list(alice, 'limit=1', '/api/v1/test-wallet-transactions');
    expect(all.body.meta.totalCount).toBeGreaterThanOrEqual(4); // two opening credits and the payout's two
    const next = await list(
      alice,
      `limit=1&nextCursor=${encodeURIComponent(all.body.meta.nextCursor!)}`,
      '/api/v1/test-wallet-transactions',
    );
    expect(next.body.data[0]!.transaction_id).not.toBe(undefined);
    expect(
      (
        await list(
          bob,
          `nextCursor=${encodeURIComponent(all.body.meta.nextCursor!)}`,
          '/api/v1/test-wallet-transactions',
        )
      ).status,
    ).toBe(422);
  });
});
