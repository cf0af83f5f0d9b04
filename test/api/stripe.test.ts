import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { runCliIn } from '../helpers/cli';
import { startStripeDouble, type StripeDouble } from '../helpers/stripe';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { terminals, transactions } from '../../src/db/schema/index';
import Stripe from 'stripe';
import { stripeAcquirer } from '../../activities/connectors/stripe';
import { NotProcessedError, OutcomeUnknownError } from '../../activities/connectors/errors';
import { SEND_LANDS_WITHIN_MS } from '../../src/contracts';
import { reconciliationLegs } from '../../activities/reconciliation';

let env: TestEnv;
let stripe: StripeDouble;
let merchant: MerchantClient;
let stripeTerminal: string;

beforeAll(async () => {
  stripe = await startStripeDouble();
  // The sample merchant URLs do not resolve on a machine without DNS; URL checks are not the subject here.
  env = await startTestEnv({ STRIPE_API_URL: stripe.url, ALLOW_PRIVATE_URLS: 'true' });
  const credentials = await env.createMerchant();
  merchant = merchantClient(env.app, credentials);
  // Stripe first (priority 1), the sandbox terminals (10, 20) behind it.
  const added = await runCliIn(
    env,
    'terminals',
    'add',
    '--merchant',
    credentials.merchant_id,
    '--mode',
    'test',
    '--kind',
    'card',
    '--connector',
    'stripe',
    '--secret-key',
    'sk_test_doubleDOUBLEdouble123',
    '--priority',
    '1',
    '--descriptor',
    'SHOP*STRIPE',
    '--json',
  );
  expect(added.code, added.stderr).toBe(0);
  stripeTerminal = (JSON.parse(added.stdout) as { terminal_id: string }).terminal_id;
});
afterAll(async () => {
  await env?.close();
  await stripe?.close();
});

const pay = (card: string, extra: Record<string, unknown> = {}) =>
  merchant.post(
    '/api/v1/test/card',
    cardRequest({ card_number: card, order_id: `stripe-${Math.random()}`, ...extra }),
  );

const intentsFor = (transactionId: string) =>
  [...stripe.intents.values()].filter(
    (i) => (i.metadata as Record<string, string>).transaction_id === transactionId,
  );

/** An authorization through Stripe straight from the connector, with the given deadline. */
const authorizeWithDeadline = (deadline: Date) =>
  stripeAcquirer({ apiUrl: stripe.url }).authorize({
    idempotencyKey: `PA${Math.random()}:authorize:ter_x`,
    transactionId: 'PAdeadline',
    mode: 'test',
    pan: '4242424242424242',
    cvv: '123',
    expiry: '12/2099',
    amountMinor: 1050n,
    currency: 'USD',
    terminalRank: 0,
    terminal: { terminalId: 'ter_x', credentials: { secret_key: 'sk_test_doubleDOUBLEdouble123' } },
    returnUrl: 'https://payments.test/return',
    deadline,
    signal: new AbortController().signal,
  });

describe('Stripe as a card acquirer, through the API, against stripe-mock', () => {
  it('charges a card once, with an idempotency key from the transaction and terminal', async () => {
    const response = await pay('4242424242424242');
    expect(response.json()).toMatchObject({ status: 'SUCCESS', data: { descriptor: 'SHOP*STRIPE' } });
    const id = response.json().data.transaction_id as string;
    expect(intentsFor(id)).toHaveLength(1);
    const keys = stripe.requests.filter((r) => r.path === '/v1/payment_intents' && r.method === 'POST');
    expect(keys.at(-1)!.idempotencyKey).toBe(`${id}:authorize:${stripeTerminal}`);
  });

  it('refunds a Stripe payment once, under the refund key, naming the PaymentIntent kept when it was paid', async () => {
    const paid = await pay('4242424242424242');
    const id = paid.json().data.transaction_id as string;
    const [intent] = intentsFor(id);
    const row = async () =>
      (
        await env.database.db
          .select({ acquirer: transactions.acquirerReference, refund: transactions.refundReference })
          .from(transactions)
          .where(eq(transactions.id, id))
      )[0]!;
    expect(await row()).toEqual({ acquirer: intent!.id, refund: null });
    const listedBefore = stripe.requests.filter(
      (r) => r.method === 'GET' && r.path === '/v1/payment_intents',
    );
    const refund = () =>
      merchant.postPlain('/api/v1/test/refund?Skip-Encryption=true', {
        transaction_id: id,
        reason: 'Returned',
      });
    const refunded = await refund();
    expect(refunded.statusCode, refunded.body).toBe(200);
    expect(refunded.json().data.refund.status).toBe(true);
    const refunds = stripe.requests.filter((r) => r.path === '/v1/refunds' && r.method === 'POST');
    expect(refunds.map((r) => r.idempotencyKey)).toEqual([`${id}:refund`]);
    // Named, not searched for: Stripe's search covers recent payments only.
    expect(stripe.requests.filter((r) => r.method === 'GET' && r.path === '/v1/payment_intents')).toEqual(
      listedBefore,
    );
    expect((await row()).refund).toMatch(/^re_/);
    expect((await refund()).json().message).toBe('Transaction has already been refunded.');
    expect(stripe.violations).toEqual([]);
  });

  it('tells declines as the merchant reads them, and does not cascade a decline', async () => {
    const declined = await pay('4000000000000002');
    expect(declined.json()).toMatchObject({ status: 'FAILED', message: 'Card declined.' });
    const poor = await pay('4000000000009995');
    expect(poor.json()).toMatchObject({ status: 'FAILED', message: 'Insufficient funds.' });
    const id = poor.json().data.transaction_id as string;
    const sandbox = await env.database.db.execute(
      sql`select count(*)::int as n from sandbox_operations where idempotency_key like ${`${id}%`}`,
    );
    expect((sandbox.rows[0] as { n: number }).n).toBe(0);
  });

  it("sends the cardholder to Stripe's 3-D Secure page and reads the answer on return", async () => {
    const created = await pay('4000002760003184', { redirect_url: 'https://shop.example/back' });
    expect(created.json().status).toBe('REDIRECT');
    const id = created.json().data.transaction_id as string;
    const [intent] = intentsFor(id);
    expect(created.json().redirect_url).toBe(`${stripe.url}/3ds/${String(intent!.id)}`);

    stripe.complete3ds(String(intent!.id), true);
    const back = await env.app.inject({ method: 'GET', url: `/api/v1/test/card/return/${id}` });
    expect(back.statusCode).toBe(303);
    expect(back.headers.location).toContain('status=SUCCESS');
    expect((await merchant.get(`/api/test/status/${id}`)).json().status).toBe('SUCCESS');
  });

  it('an early visit to the return URL neither approves nor fails: the challenge waits for the real return', async () => {
    const created = await pay('4000002760003184');
    const id = created.json().data.transaction_id as string;
    const early = await env.app.inject({ method: 'GET', url: `/api/v1/test/card/return/${id}` });
    expect(early.statusCode).toBeLessThan(500);
    const asked = stripe.requests.length;
    // The visit made the workflow ask Stripe once; then it waits for the cardholder, asking nothing more.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(stripe.requests.length).toBe(asked);
    expect((await merchant.get(`/api/test/status/${id}`)).json().status).toBe('REDIRECT');
    stripe.complete3ds(String(intentsFor(id)[0]!.id), false);
    const back = await env.app.inject({ method: 'GET', url: `/api/v1/test/card/return/${id}` });
    expect(back.statusCode).toBe(303);
    expect((await merchant.get(`/api/test/status/${id}`)).json()).toMatchObject({
      status: 'FAILED',
      message: '3DS authentication failed.',
    });
  });

  it('a lost answer is retried with the same idempotency key: one charge', async () => {
    stripe.loseNextIntentAnswer();
    const response = await pay('4242424242424242');
    const id = response.json().data.transaction_id as string;
    await expect
      .poll(async () => (await merchant.get(`/api/test/status/${id}`)).json().status, {
        timeout: 30_000,
        interval: 250,
      })
      .toBe('SUCCESS');
    expect(intentsFor(id)).toHaveLength(1);
    const sent = stripe.requests.filter(
      (r) => r.method === 'POST' && r.path === '/v1/payment_intents' && r.idempotencyKey?.startsWith(id),
    );
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(new Set(sent.map((r) => r.idempotencyKey)).size).toBe(1);
  });

  it('sends nothing to Stripe once the authorization is past its deadline: certainly not processed', async () => {
    const before = stripe.requests.length;
    await expect(authorizeWithDeadline(new Date(Date.now() - 1))).rejects.toBeInstanceOf(NotProcessedError);
    expect(stripe.requests.length).toBe(before);
  });

  it('gives up a PaymentIntent whose answer has not come by the deadline: its outcome unknown', async () => {
    stripe.delayNextIntentAnswer(5_000);
    const sent = Date.now();
    await expect(authorizeWithDeadline(new Date(Date.now() + 1_500))).rejects.toBeInstanceOf(
      OutcomeUnknownError,
    );
    expect(Date.now() - sent).toBeLessThan(4_500);
    // Stripe's books keep the PaymentIntent it processed; it belongs to no payment of this file's.
    for (const [id, intent] of stripe.intents)
      if ((intent.metadata as Record<string, string>).transaction_id === 'PAdeadline')
        stripe.intents.delete(id);
  });

  it(
    'a Stripe server error is asked about, then cascades to the sandbox terminal',
    { timeout: 120_000 },
    async () => {
      const response = await pay('4000000000000119');
      const id = response.json().data.transaction_id as string;
      // Stripe's "not found" is trusted once the request can no longer land (SEND_LANDS_WITHIN_MS).
      await expect
        .poll(async () => (await merchant.get(`/api/test/status/${id}`)).json(), {
          timeout: SEND_LANDS_WITHIN_MS + 30_000,
          interval: 250,
        })
        .toMatchObject({ status: 'SUCCESS', data: { descriptor: 'SANDBOX*PRIMARY' } });
      expect(intentsFor(id)).toHaveLength(0);
    },
  );

  it.each([
    // ISO 4217 minor units in, Stripe's own units out (docs.stripe.com/currencies).
    ['USD', 1050, 1050],
    ['JPY', 500, 500],
    ['ISK', 500, 50_000],
    ['KWD', 1230, 1230],
    ['MGA', 1000, 10],
  ])('charges %s %i (ISO minor units) as Stripe amount %i', async (currency, amount, stripeAmount) => {
    const response = await pay('4242424242424242', { currency, amount });
    expect(response.json(), response.body).toMatchObject({ status: 'SUCCESS' });
    const [intent] = intentsFor(response.json().data.transaction_id as string);
    expect(intent).toMatchObject({ amount: stripeAmount, currency: currency.toLowerCase() });
  });

  it.each([
    ['MGA', 1050, 'Stripe takes MGA in whole units: 10.50 MGA cannot be charged exactly.'],
    ['KWD', 1234, 'Stripe takes KWD amounts whose last decimal is 0: 1.234 KWD cannot be charged exactly.'],
  ])('refuses %s %i before any call to Stripe, with why', async (currency, amount, message) => {
    const before = stripe.requests.length;
    const response = await pay('4242424242424242', { currency, amount, terminal_id: stripeTerminal });
    expect(response.json()).toMatchObject({ status: 'FAILED', message });
    expect(stripe.requests.length, 'nothing was sent to Stripe').toBe(before);
  });

  it('never shows SUCCESS on an authorization alone: a payment on a manual-capture account is captured', async () => {
    stripe.captureMethod = 'manual';
    try {
      const response = await pay('4242424242424242');
      expect(response.json()).toMatchObject({ status: 'SUCCESS' });
      const id = response.json().data.transaction_id as string;
      const [intent] = intentsFor(id);
      // Asked for automatic capture, whatever the account's default: captured as Stripe confirmed it.
      expect(intent).toMatchObject({ capture_method: 'automatic', status: 'succeeded' });

      // A PaymentIntent Stripe only authorized (as one made before payments asked for automatic capture):
      // captured, under its own key, before the payment shows SUCCESS.
      const acquirer = stripeAcquirer({ apiUrl: stripe.url });
      const terminal = {
        terminalId: stripeTerminal,
        credentials: { secret_key: 'sk_test_doubleDOUBLEdouble123' },
      };
      const created = await new Stripe(
        'sk_test_doubleDOUBLEdouble123',
        stripeClientOptions(stripe.url),
      ).paymentIntents.create({
        amount: 700,
        currency: 'usd',
        payment_method: 'pm_card_visa',
        confirm: true,
        capture_method: 'manual',
      });
      expect(stripe.intents.get(created.id)).toMatchObject({ status: 'requires_capture' });
      const looked = await acquirer.lookup({
        authorizationKey: 'legacy-key',
        reference: created.id,
        terminal,
      });
      expect(looked).toEqual({ outcome: 'approved', reference: created.id });
      expect(stripe.intents.get(created.id)).toMatchObject({ status: 'succeeded' });
      const captures = stripe.requests.filter((r) => r.path === `/v1/payment_intents/${created.id}/capture`);
      expect(captures.map((r) => r.idempotencyKey)).toEqual(['legacy-key:capture']);
    } finally {
      stripe.captureMethod = 'automatic';
    }
  });

  it('every request Stripe got matched its API specification, and the secret key is stored encrypted', async () => {
    expect(stripe.requests.length).toBeGreaterThan(10);
    expect(stripe.violations).toEqual([]);
    const [row] = await env.database.db.select().from(terminals).where(eq(terminals.id, stripeTerminal));
    expect(row!.credentialsEnc).toBeTruthy();
    expect(row!.credentialsEnc).not.toContain('sk_test_');
  });
});

describe('reconciliation against Stripe (docs/reconciliation.md)', () => {
  it('finds every succeeded PaymentIntent a paid payment and every refund a refund, for their amounts, and each Stripe changed', async () => {
    const paid = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ order_id: `recon-${Math.random()}` }),
    );
    expect(paid.json().status).toBe('SUCCESS');
    const [leg] = reconciliationLegs(env.database.db, {
      stripe: { masterKey: env.config.MASTER_KEY, apiUrl: stripe.url },
    }).filter((l) => l.source === 'stripe');
    const scope = {
      from: new Date(0),
      to: new Date(Date.now() + 60_000),
      transactionIds: [],
      references: [],
    };
    expect(await leg!.check(scope)).toEqual([]);

    const intent = [...stripe.intents.values()].find(
      (i) => (i.metadata as Record<string, string>).transaction_id === paid.json().data.transaction_id,
    )!;
    intent.amount = Number(intent.amount) + 1;
    const found = await leg!.check(scope);
    expect(found.map((f) => `${f.kind}/${f.reference}`)).toEqual([`amount/${String(intent.id)}`]);
    intent.amount = Number(intent.amount) - 1;

    // Refunded: Stripe's refund is the one recorded, for the payment's amount, until Stripe's books differ.
    const refunded = await merchant.postPlain('/api/v1/test/refund?Skip-Encryption=true', {
      transaction_id: paid.json().data.transaction_id,
      reason: 'Returned',
    });
    expect(refunded.statusCode, refunded.body).toBe(200);
    expect(await leg!.check(scope)).toEqual([]);
    const refund = [...stripe.refunds.values()].find((r) => r.payment_intent === intent.id)!;
    refund.amount = Number(refund.amount) - 1;
    expect((await leg!.check(scope)).map((f) => `${f.kind}/${f.reference}`)).toEqual([
      `amount/${String(refund.id)}`,
    ]);
    refund.amount = Number(refund.amount) + 1;
    // A refund our ledger never recorded: Stripe refunded it again.
    stripe.refunds.set('re_by_hand', { ...refund, id: 're_by_hand' });
    expect((await leg!.check(scope)).map((f) => `${f.kind}/${f.reference}`)).toEqual([
      'duplicate/re_by_hand',
    ]);
    stripe.refunds.delete('re_by_hand');
    // The refund we recorded is gone from Stripe's books.
    stripe.refunds.delete(String(refund.id));
    expect((await leg!.check(scope)).map((f) => `${f.kind}/${f.reference}`)).toEqual([
      `missing_at_source/refund:${paid.json().data.transaction_id}`,
    ]);
    stripe.refunds.set(String(refund.id), refund);
    // Stripe's requests all matched its published API (list and retrieve included).
    expect(stripe.violations).toEqual([]);
  });
});

/** Options for Stripe's own client against the double, as the connector sets them. */
function stripeClientOptions(url: string) {
  const api = new URL(url);
  return { host: api.hostname, port: api.port, protocol: 'http' as const, maxNetworkRetries: 0 };
}
