import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, asc, eq, sql } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { merchantClient, payoutRequest, type MerchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver, verifyWebhook } from '../helpers/webhook-receiver';
import { ledgerEntries, wallets } from '../../src/db/schema/index';
import type { MerchantCredentials } from '../../src/merchants/accounts';

let env: TestEnv;
let merchant: MerchantClient;
let credentials: MerchantCredentials;

beforeAll(async () => {
  env = await startTestEnv();
  credentials = await env.createMerchant();
  merchant = merchantClient(env.app, credentials);
});
afterAll(() => env?.close());

const walletOf = (c: MerchantCredentials, currency: string, mode: 'test' | 'live' = 'test') =>
  c.wallets.find((w) => w.currency === currency && w.mode === mode)!.wallet_id;

async function balance(walletId: string): Promise<bigint> {
  const [wallet] = await env.database.db.select().from(wallets).where(eq(wallets.id, walletId));
  return wallet!.available;
}

async function ledgerTotal(walletId: string): Promise<bigint> {
  const rows = await env.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.walletId, walletId));
  return rows.reduce((sum, e) => sum + e.amount, 0n);
}

const payout = (overrides: Record<string, unknown> = {}, client = merchant, c = credentials) =>
  client.post('/api/v1/test/payout', payoutRequest(walletOf(c, 'USD'), overrides));

describe('POST /api/v1/{mode}/payout: the sandbox payout table', () => {
  it.each([
    ['4222222222222222', 'SUCCESS', 'Transaction processed successfully.', -500n],
    ['5111222233334444', 'SUCCESS', 'Transaction processed successfully.', -500n],
    ['4333333333333333', 'FAILED', 'Payout declined by the card issuer.', 0n],
    ['5222333344445555', 'FAILED', 'Payout declined by the card issuer.', 0n],
    ['4012888888881881', 'FAILED', 'The Card is not supported for testing.', 0n],
  ])('card %s answers %s (%s) and moves the wallet accordingly', async (card, status, message, moved) => {
    const wallet = walletOf(credentials, 'USD');
    const before = await balance(wallet);
    const response = await payout({ card_number: card });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      status,
      message,
      data: { amount: 500, currency: 'USD', wallet_id: wallet, customer: { first_name: 'Jane' } },
    });
    expect(response.json().data).not.toHaveProperty('refund');
    expect(await balance(wallet)).toBe(before + moved);
    expect(await ledgerTotal(wallet)).toBe(await balance(wallet));
  });

  it("blocks a payout whose currency differs from the wallet's", async () => {
    const response = await payout({ currency: 'EUR' });
    expect(response.json()).toMatchObject({
      status: 'BLOCKED',
      message: "Currency must match the wallet's currency",
    });
    expect(response.json().data.currency).toBe('EUR');
  });

  it('fails any test-mode amount above 1000 as insufficient funds, without touching the wallet', async () => {
    const wallet = walletOf(credentials, 'USD');
    const before = await balance(wallet);
    const response = await payout({ amount: 1001 });
    expect(response.json()).toMatchObject({ status: 'FAILED', message: 'Insufficient funds.' });
    expect(await balance(wallet)).toBe(before);
    expect((await payout({ amount: 1000 })).json().status).toBe('SUCCESS');
  });

  it('echoes an amount above 2^53 exactly in the answer and the status', async () => {
    const response = await payout({ amount: '9007199254740993', order_id: 'huge-1' });
    expect(response.json()).toMatchObject({ status: 'FAILED', message: 'Insufficient funds.' });
    expect(response.payload).toContain('"amount":9007199254740993,');
    const id = response.json().data.transaction_id;
    expect((await merchant.get(`/api/test/status/${id}`)).payload).toContain('"amount":9007199254740993,');
  });

  it('blocks a payout from an inactive wallet and leaves it untouched', async () => {
    const idle = await env.createMerchant();
    const wallet = walletOf(idle, 'USD');
    await env.database.db.update(wallets).set({ status: 'Inactive' }).where(eq(wallets.id, wallet));
    const response = await payout({}, merchantClient(env.app, idle), idle);
    expect(response.json()).toMatchObject({ status: 'BLOCKED', message: 'The wallet is inactive.' });
    expect(await balance(wallet)).toBe(1_000_000n);
    expect(await ledgerTotal(wallet)).toBe(1_000_000n);
  });

  it('fails a payout the wallet cannot fund', async () => {
    const poor = await env.createMerchant({ wallets: [{ currency: 'USD', amount: 300n }] });
    const client = merchantClient(env.app, poor);
    const response = await payout({ amount: 400 }, client, poor);
    expect(response.json()).toMatchObject({ status: 'FAILED', message: 'Insufficient funds.' });
    expect(await balance(walletOf(poor, 'USD'))).toBe(300n);
  });

  it('sends one signed webhook for the final status', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const response = await payout({ webhook_url: receiver.url });
      const [webhook] = await receiver.waitFor(1);
      expect(webhook!.json).toMatchObject({
        status: 'SUCCESS',
        data: { transaction_id: response.json().data.transaction_id },
      });
      expect(verifyWebhook(webhook!, credentials.webhook_secret)).toEqual({ hash: true, signature: true });
    } finally {
      await receiver.close();
    }
  });
});

describe('payout verification page', () => {
  async function pendingPayout() {
    const wallet = walletOf(credentials, 'USD');
    const before = await balance(wallet);
    const created = await payout({ card_number: '4000000000003220' });
    const body = created.json();
    const path = `/api/v1/test/payout/verification/${body.data.transaction_id}`;
    const page = await env.app.inject({ url: path });
    const cookie = String(page.headers['set-cookie']).split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const submit = (decision: string) =>
      env.app.inject({
        method: 'POST',
        url: path,
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        payload: new URLSearchParams({ decision, csrf }).toString(),
      });
    return { wallet, before, body, path, page, submit };
  }

  it('answers PENDING with the verification redirect_url and holds the amount', async () => {
    const { wallet, before, body, page } = await pendingPayout();
    expect(body.status).toBe('PENDING');
    expect(body.redirect_url).toBe(
      `http://payments.test/api/v1/test/payout/verification/${body.data.transaction_id}`,
    );
    expect(await balance(wallet)).toBe(before - 500n);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.body).toContain('5.00 USD');
  });

  it('approval pays out and settles', async () => {
    const { wallet, before, body, submit } = await pendingPayout();
    const response = await submit('approve');
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('SUCCESS');
    expect((await merchant.get(`/api/test/status/${body.data.transaction_id}`)).json().status).toBe(
      'SUCCESS',
    );
    expect(await balance(wallet)).toBe(before - 500n);
    const steps = await env.database.db
      .select({ step: ledgerEntries.step })
      .from(ledgerEntries)
      .where(eq(ledgerEntries.reference, body.data.transaction_id))
      .orderBy(asc(ledgerEntries.id));
    expect(steps.map((s) => s.step)).toEqual(['reserve', 'settle']);
  });

  it('rejection fails the payout and releases the reservation; a second answer changes nothing', async () => {
    const { wallet, before, body, submit } = await pendingPayout();
    await submit('decline');
    expect((await merchant.get(`/api/test/status/${body.data.transaction_id}`)).json()).toMatchObject({
      status: 'FAILED',
      message: 'Payout rejected at verification.',
    });
    expect(await balance(wallet)).toBe(before);
    const again = await submit('approve');
    expect(again.body).toContain('FAILED');
    expect((await merchant.get(`/api/test/status/${body.data.transaction_id}`)).json().status).toBe('FAILED');
  });
});

describe('payout validation and security', () => {
  it.each([
    [{ wallet_id: 'wal_nope' }, 'wallet_id', 'The selected wallet id is invalid.'],
    [
      { card_number: '4222222222222223' },
      'card_number',
      'The card number field must be a valid card number.',
    ],
    [
      { amount: 12.5 },
      'amount',
      "The amount field must be a positive integer in the currency's minor units.",
    ],
    [{ currency: 'ZZZ' }, 'currency', 'The currency field must be a valid ISO 4217 currency code.'],
    [{ card_expiry_year: '2001' }, 'card_expiry_year', 'The card has expired.'],
    [{ country: 'ZZ' }, 'country', 'The country field must be a valid ISO 3166-1 country code.'],
  ])('answers 422 for %j', async (overrides, field, message) => {
    const response = await payout(overrides);
    expect(response.statusCode).toBe(422);
    expect(response.json().errors[field]).toContain(message);
  });

  it('takes the documented test cards that fail Luhn only in test mode', async () => {
    const live = await merchant.post(
      '/api/v1/live/payout',
      payoutRequest(walletOf(credentials, 'USD', 'live')),
    );
    expect(live.statusCode).toBe(422);
    expect(live.json().errors.card_number).toEqual(['The card number field must be a valid card number.']);
  });

  it("refuses another merchant's wallet and a wallet of the other mode", async () => {
    const other = await env.createMerchant();
    expect((await payout({ wallet_id: walletOf(other, 'USD') })).statusCode).toBe(422);
    expect((await payout({ wallet_id: walletOf(credentials, 'USD', 'live') })).statusCode).toBe(422);
  });

  it('replays a repeated order id and refuses a changed one', async () => {
    const first = await payout({ order_id: 'payout-once' });
    const again = await payout({ order_id: 'payout-once' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().data.transaction_id).toBe(first.json().data.transaction_id);
    expect((await payout({ order_id: 'payout-once', amount: 700 })).statusCode).toBe(409);
    const debits = await env.database.db
      .select()
      .from(ledgerEntries)
      .where(
        and(eq(ledgerEntries.reference, first.json().data.transaction_id), eq(ledgerEntries.step, 'reserve')),
      );
    expect(debits).toHaveLength(1);
  });
});

describe('a wallet under concurrent payouts', () => {
  it('funds what it can, fails the rest with "Insufficient funds.", and never goes negative', async () => {
    const funded = await env.createMerchant({ wallets: [{ currency: 'USD', amount: 10_000n }] });
    const client = merchantClient(env.app, funded);
    const wallet = walletOf(funded, 'USD');
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => payout({ amount: 900, order_id: `burst-${i}` }, client, funded)),
    );
    // On a loaded machine a first answer can be PENDING (the workflow answers later): read those back
    // once final. The counts are about money, not about how fast the answer came.
    const bodies = await Promise.all(
      responses.map(async (r) => {
        let body = r.json();
        const deadline = Date.now() + 60_000;
        while (body.status === 'PENDING' && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          body = (await client.get(`/api/test/status/${body.data.transaction_id as string}`)).json();
        }
        return body;
      }),
    );
    const succeeded = bodies.filter((b) => b.status === 'SUCCESS');
    const failed = bodies.filter((b) => b.status === 'FAILED');
    expect(succeeded).toHaveLength(11);
    expect(failed).toHaveLength(39);
    expect(failed.every((b) => b.message === 'Insufficient funds.')).toBe(true);
    expect(await balance(wallet)).toBe(10_000n - 11n * 900n);
    expect(await ledgerTotal(wallet)).toBe(await balance(wallet));
    const negative = await env.database.db.execute(
      sql`select count(*)::int as n from wallets where available < 0`,
    );
    expect((negative.rows[0] as { n: number }).n).toBe(0);
  });
});
