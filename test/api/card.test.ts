import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver, verifyWebhook } from '../helpers/webhook-receiver';
import { transactions } from '../../src/db/schema/index';

let env: TestEnv;
let merchant: MerchantClient;
let order = 0;
const nextOrder = () => `card-${++order}-${Date.now()}`;

beforeAll(async () => {
  env = await startTestEnv();
  merchant = merchantClient(env.app, await env.createMerchant());
});
afterAll(() => env?.close());

/** The vault rows of the merchant's transaction with this order id, and vault rows of no transaction. */
async function vaultRowsOf(orderId: string): Promise<{ vaulted: number; orphans: number }> {
  const { rows } = await env.database.db.execute<{ vaulted: number; orphans: number }>(sql`
    select
      (select count(*)::int from card_vault v join transactions t on t.id = v.transaction_id
        where t.order_id = ${orderId} and t.merchant_id = ${merchant.credentials.merchant_id}) as vaulted,
      (select count(*)::int from card_vault v
        where not exists (select 1 from transactions t where t.id = v.transaction_id)) as orphans`);
  return rows[0]!;
}

const pay = (overrides: Record<string, unknown> = {}, client = merchant) =>
  client.post('/api/v1/test/card', cardRequest({ order_id: nextOrder(), ...overrides }));

describe('POST /api/v1/{mode}/card: the sandbox card table', () => {
  it.each([
    [
      '4111111111111111',
      'REDIRECT',
      'Redirect the customer to redirect_url to complete 3DS authentication.',
      'SANDBOX*PRIMARY',
    ],
    [
      '5555555555554444',
      'REDIRECT',
      'Redirect the customer to redirect_url to complete 3DS authentication.',
      'SANDBOX*PRIMARY',
    ],
    ['4242424242424242', 'SUCCESS', 'Transaction processed successfully.', 'SANDBOX*PRIMARY'],
    ['4000000000000002', 'FAILED', 'Card declined.', 'SANDBOX*PRIMARY'],
    ['4000000000009995', 'FAILED', 'Insufficient funds.', 'SANDBOX*PRIMARY'],
    ['4000000000000119', 'SUCCESS', 'Transaction processed successfully.', 'SANDBOX*FALLBACK'],
    ['4012888888881881', 'FAILED', 'The Card is not supported for testing.', 'SANDBOX*PRIMARY'],
  ])('card %s answers %s', async (card, status, message, descriptor) => {
    const response = await pay({ card_number: card });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ status, message, data: { descriptor, amount: 1050, currency: 'USD' } });
    const id = body.data.transaction_id;
    if (status === 'REDIRECT') {
      expect(body.redirect_url).toBe(`http://payments.test/api/v1/test/card/checkout/${id}`);
    } else {
      expect(body.redirect_url).toBeUndefined();
    }
    const status2 = await merchant.get(`/api/test/status/${id}`);
    expect(status2.json()).toMatchObject({ status, message });
  });

  it('keeps the search attributes in step with the status, so ops can filter in the Temporal UI', async () => {
    const response = await pay({ card_number: '4242424242424242' });
    const id = response.json().data.transaction_id;
    const query = `WorkflowId = '${id}' AND TransactionStatus = 'SUCCESS' AND TransactionKind = 'card' AND MerchantId = '${merchant.credentials.merchant_id}' AND TransactionMode = 'test'`;
    let found = 0;
    for (let i = 0; i < 50 && found === 0; i++) {
      for await (const _ of env.client.workflow.list({ query })) found += 1;
      if (found === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(found).toBe(1);
  });

  it('does not cascade when the terminal is pinned', async () => {
    const terminal = merchant.credentials.terminals.find(
      (t) => t.mode === 'test' && t.descriptor === 'SANDBOX*PRIMARY',
    )!;
    const response = await pay({ card_number: '4000000000000119', terminal_id: terminal.terminal_id });
    expect(response.json()).toMatchObject({
      status: 'FAILED',
      message: 'The payment could not be processed.',
    });
  });

  it('routes to a pinned fallback terminal directly', async () => {
    const terminal = merchant.credentials.terminals.find(
      (t) => t.mode === 'test' && t.descriptor === 'SANDBOX*FALLBACK',
    )!;
    const response = await pay({ card_number: '4242424242424242', terminal_id: terminal.terminal_id });
    expect(response.json()).toMatchObject({ status: 'SUCCESS', data: { descriptor: 'SANDBOX*FALLBACK' } });
  });

  it('does not cascade a decline to the next terminal', async () => {
    const response = await pay({ card_number: '4000000000000002' });
    expect(response.json().data.descriptor).toBe('SANDBOX*PRIMARY');
  });

  it('marks a card that already paid this merchant as is_card_WL', async () => {
    const client = merchantClient(env.app, await env.createMerchant());
    const first = await pay({ card_number: '4242424242424242' }, client);
    expect(first.json().data.is_card_WL).toBe(false);
    const second = await pay({ card_number: '4242424242424242' }, client);
    expect(second.json().data.is_card_WL).toBe(true);
    const otherCard = await pay({ card_number: '5555555555554444' }, client);
    expect(otherCard.json().data.is_card_WL).toBe(false);
  });

  it('accepts an alpha-3 country and stores only BIN, last four and a fingerprint', async () => {
    const response = await pay({ country: 'USA', card_number: '4242 4242 4242 4242' });
    expect(response.json().status).toBe('SUCCESS');
    const [row] = await env.database.db
      .select()
      .from(transactions)
      .where(eq(transactions.id, response.json().data.transaction_id));
    expect(row).toMatchObject({ cardBin: '424242', cardLast4: '4242' });
    expect(row!.cardFingerprint).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('order_id idempotency', () => {
  it('replays the same request without a second transaction', async () => {
    const orderId = nextOrder();
    const first = await merchant.post('/api/v1/test/card', cardRequest({ order_id: orderId }));
    const again = await merchant.post('/api/v1/test/card', cardRequest({ order_id: orderId }));
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.json().data.transaction_id).toBe(first.json().data.transaction_id);
    const rows = await env.database.db.select().from(transactions).where(eq(transactions.orderId, orderId));
    expect(rows).toHaveLength(1);
  });

  it('answers 409 when the order id comes back with different fields', async () => {
    const orderId = nextOrder();
    await merchant.post('/api/v1/test/card', cardRequest({ order_id: orderId }));
    const conflict = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ order_id: orderId, amount: 2000 }),
    );
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toEqual({ message: 'The order id has already been taken.' });
    // The refused create vaulted nothing: the claim and the card are one statement.
    expect(await vaultRowsOf(orderId)).toEqual({ vaulted: 1, orphans: 0 });
  });

  it('resolves concurrent duplicates to exactly one transaction and one workflow', async () => {
    const orderId = nextOrder();
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => merchant.post('/api/v1/test/card', cardRequest({ order_id: orderId }))),
    );
    const ids = new Set(responses.map((r) => r.json().data.transaction_id));
    expect(responses.every((r) => r.statusCode === 200)).toBe(true);
    expect(ids.size).toBe(1);
    const rows = await env.database.db
      .select()
      .from(transactions)
      .where(
        and(eq(transactions.orderId, orderId), eq(transactions.merchantId, merchant.credentials.merchant_id)),
      );
    expect(rows).toHaveLength(1);
    // One card in the vault, the winner's: the seven that met the unique index vaulted nothing.
    expect(await vaultRowsOf(orderId)).toEqual({ vaulted: 1, orphans: 0 });
    const runs = env.client.workflow.list({ query: `WorkflowId = '${[...ids][0]}'` });
    let count = 0;
    for await (const _ of runs) count += 1;
    expect(count).toBe(1);
  });

  it('lets another merchant use the same order id', async () => {
    const orderId = nextOrder();
    const other = merchantClient(env.app, await env.createMerchant());
    const a = await merchant.post('/api/v1/test/card', cardRequest({ order_id: orderId }));
    const b = await other.post('/api/v1/test/card', cardRequest({ order_id: orderId }));
    expect(b.statusCode).toBe(200);
    expect(b.json().data.transaction_id).not.toBe(a.json().data.transaction_id);
  });
});

describe('card validation', () => {
  const year = new Date().getUTCFullYear();
  it.each([
    [
      { card_number: '4242424242424241' },
      'card_number',
      'The card number field must be a valid card number.',
    ],
    [{ card_number: '42424242' }, 'card_number', 'The card number field must be a valid card number.'],
    [
      { card_expiry_month: '13' },
      'card_expiry_month',
      'The card expiry month field must be two digits, 01 to 12.',
    ],
    [
      { card_expiry_year: '30' },
      'card_expiry_year',
      'The card expiry year field must be four digits (YYYY).',
    ],
    [{ card_expiry_year: String(year - 1) }, 'card_expiry_year', 'The card has expired.'],
    [{ card_cvv: '12' }, 'card_cvv', 'The card cvv field must be 3 or 4 digits.'],
    [{ card_cvv: undefined }, 'card_cvv', 'The card cvv field is required.'],
    [
      { amount: 10.5 },
      'amount',
      "The amount field must be a positive integer in the currency's minor units.",
    ],
    [{ amount: 0 }, 'amount', "The amount field must be a positive integer in the currency's minor units."],
    [
      { amount: -100 },
      'amount',
      "The amount field must be a positive integer in the currency's minor units.",
    ],
    [{ currency: 'ABC' }, 'currency', 'The currency field must be a valid ISO 4217 currency code.'],
    [{ country: 'XYZ' }, 'country', 'The country field must be a valid ISO 3166-1 country code.'],
    [{ email: 'not-an-email' }, 'email', 'The email field must be a valid email address.'],
    [{ ip_address: '999.1.1.1' }, 'ip_address', 'The ip address field must be a valid IPv4 or IPv6 address.'],
    [
      { redirect_url: 'ftp://x.example' },
      'redirect_url',
      'The redirect url field must be an absolute http or https URL.',
    ],
    [{ first_name: undefined }, 'first_name', 'The first name field is required.'],
    [{ terminal_id: 'ter_nope' }, 'terminal_id', 'The selected terminal id is invalid.'],
  ])('answers 422 for %j', async (overrides, field, message) => {
    const response = await merchant.post('/api/v1/test/card', cardRequest(overrides));
    expect(response.statusCode).toBe(422);
    expect(response.json().message).toBe(message);
    expect(response.json().errors[field]).toContain(message);
  });

  it('lists every failing field at once', async () => {
    const response = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ email: 'x', card_cvv: '1', currency: 'XXX' }),
    );
    expect(Object.keys(response.json().errors).sort()).toEqual(['card_cvv', 'currency', 'email']);
  });

  it('refuses a loopback webhook_url in live mode, accepts it in test mode', async () => {
    const live = await merchant.post(
      '/api/v1/live/card',
      cardRequest({ webhook_url: 'http://127.0.0.1:9/hook' }),
    );
    expect(live.statusCode).toBe(422);
    expect(live.json().errors.webhook_url).toBeDefined();
    const test = await pay({ webhook_url: 'http://127.0.0.1:9/hook' });
    expect(test.statusCode).toBe(200);
  });

  it("refuses another merchant's terminal", async () => {
    const other = await env.createMerchant();
    const response = await pay({ terminal_id: other.terminals[0]!.terminal_id });
    expect(response.statusCode).toBe(422);
  });
});

describe('3DS checkout page', () => {
  async function openChallenge(overrides: Record<string, unknown> = {}) {
    const created = await pay({ card_number: '4111111111111111', ...overrides });
    const id = created.json().data.transaction_id as string;
    const path = `/api/v1/test/card/checkout/${id}`;
    const page = await env.app.inject({ method: 'GET', url: path });
    const cookie = String(page.headers['set-cookie']).split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const submit = (decision: string, token = csrf, withCookie = cookie) =>
      env.app.inject({
        method: 'POST',
        url: path,
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: withCookie },
        payload: new URLSearchParams({ decision, csrf: token }).toString(),
      });
    return { id, orderId: created.json().data.order_id as string, page, submit };
  }

  it('serves a script-free page under a strict CSP', async () => {
    const { page } = await openChallenge();
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['content-security-policy']).toContain("form-action 'self' https://merchant.example");
    expect(page.body).not.toContain('<script');
    expect(page.body).toContain('10.50 USD');
    expect(page.body).toContain('•••• 1111');
    expect(page.body).not.toContain('4111111111111111');
  });

  it('approves: 303 to the merchant with transaction_id, order_id and status, then SUCCESS', async () => {
    const { id, orderId, submit } = await openChallenge();
    const response = await submit('approve');
    expect(response.statusCode).toBe(303);
    const location = new URL(String(response.headers.location));
    expect(location.origin + location.pathname).toBe('https://merchant.example/return');
    expect(Object.fromEntries(location.searchParams)).toEqual({
      transaction_id: id,
      order_id: orderId,
      status: 'SUCCESS',
    });
    expect((await merchant.get(`/api/test/status/${id}`)).json().status).toBe('SUCCESS');
  });

  it('declines: FAILED with the issuer message', async () => {
    const { id, submit } = await openChallenge();
    const response = await submit('decline');
    expect(new URL(String(response.headers.location)).searchParams.get('status')).toBe('FAILED');
    expect((await merchant.get(`/api/test/status/${id}`)).json()).toMatchObject({
      status: 'FAILED',
      message: '3DS authentication failed.',
    });
  });

  it('ignores a second submission and shows the final state', async () => {
    const { id, submit } = await openChallenge();
    await submit('approve');
    const second = await submit('decline');
    expect(second.statusCode).toBe(200);
    expect(second.body).toContain('SUCCESS');
    expect((await merchant.get(`/api/test/status/${id}`)).json().status).toBe('SUCCESS');
    const page = await env.app.inject({ method: 'GET', url: `/api/v1/test/card/checkout/${id}` });
    expect(page.body).toContain('SUCCESS');
    expect(page.body).not.toContain('name="decision"');
  });

  it('refuses a submission without the CSRF cookie or token', async () => {
    const { id, submit } = await openChallenge();
    expect((await submit('approve', 'forged')).statusCode).toBe(403);
    expect((await submit('approve', undefined, 'pa_csrf=other')).statusCode).toBe(403);
    expect((await merchant.get(`/api/test/status/${id}`)).json().status).toBe('REDIRECT');
  });

  it('answers 404 for an unknown transaction or the wrong mode', async () => {
    const { id } = await openChallenge();
    expect((await env.app.inject({ url: '/api/v1/test/card/checkout/PAnope' })).statusCode).toBe(404);
    expect((await env.app.inject({ url: `/api/v1/live/card/checkout/${id}` })).statusCode).toBe(404);
  });

  it('loses nothing when the worker restarts while the challenge is open', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { id, submit } = await openChallenge({ webhook_url: receiver.url });
      await env.stopWorker();
      await env.startWorker();
      const response = await submit('approve');
      expect(response.statusCode).toBe(303);
      expect((await merchant.get(`/api/test/status/${id}`)).json().status).toBe('SUCCESS');
      const [webhook] = await receiver.waitFor(1);
      expect(webhook!.json).toMatchObject({ status: 'SUCCESS', data: { transaction_id: id } });
    } finally {
      await receiver.close();
    }
  });
});

describe('webhooks', () => {
  it('sends one signed webhook per final status, with the status body and a stable event_id', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const success = await pay({ webhook_url: receiver.url });
      const declined = await pay({ webhook_url: receiver.url, card_number: '4000000000000002' });
      const webhooks = await receiver.waitFor(2);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received).toHaveLength(2);
      const byId = new Map(
        webhooks.map((w) => [(w.json.data as { transaction_id: string }).transaction_id, w]),
      );
      const ok = byId.get(success.json().data.transaction_id)!;
      const failed = byId.get(declined.json().data.transaction_id)!;
      expect(ok.json).toMatchObject({ status: 'SUCCESS', message: 'Transaction processed successfully.' });
      expect(failed.json).toMatchObject({ status: 'FAILED', message: 'Card declined.' });
      for (const webhook of webhooks) {
        expect(webhook.headers['content-type']).toBe('application/json');
        expect(webhook.json.event_id).toBe(webhook.headers['webhook-id']);
        expect(verifyWebhook(webhook, merchant.credentials.webhook_secret)).toEqual({
          hash: true,
          signature: true,
        });
        expect(verifyWebhook(webhook, 'wrong-secret')).toEqual({ hash: false, signature: false });
        const { event_id: _eventId, event_type: eventType, ...statusBody } = webhook.json;
        expect(eventType).toBe('status');
        const status = await merchant.get(
          `/api/test/status/${(webhook.json.data as { transaction_id: string }).transaction_id}`,
        );
        expect(statusBody).toEqual(status.json());
      }
      const attempts = await env.database.db.execute(
        sql`select count(*)::int as n from webhook_attempts where http_status = 200`,
      );
      expect((attempts.rows[0] as { n: number }).n).toBeGreaterThanOrEqual(2);
    } finally {
      await receiver.close();
    }
  });
});
