import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { runCliIn } from '../helpers/cli';
import { startStripeDouble, type StripeDouble } from '../helpers/stripe';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { forceFailUpdate } from '../../src/contracts';

/**
 * 3-D Secure on Stripe's own page, when the cardholder's return to our URL is late, never comes, comes
 * too early, or ops stop the payment meanwhile: Stripe is asked before the payment fails, a challenge still
 * open is closed there (the PaymentIntent canceled), and one the cardholder completed settles. The
 * challenge lasts 3 seconds here.
 */
const CHALLENGE_SECONDS = 3;
let env: TestEnv;
let stripe: StripeDouble;
let merchant: MerchantClient;

beforeAll(async () => {
  stripe = await startStripeDouble();
  env = await startTestEnv({
    STRIPE_API_URL: stripe.url,
    ALLOW_PRIVATE_URLS: 'true',
    CARD_CHALLENGE_TIMEOUT_SECONDS: String(CHALLENGE_SECONDS),
  });
  const credentials = await env.createMerchant();
  merchant = merchantClient(env.app, credentials);
  const added = await runCliIn(
    env,
    ...['terminals', 'add', '--merchant', credentials.merchant_id, '--mode', 'test', '--kind', 'card'],
    ...['--connector', 'stripe', '--secret-key', 'sk_test_doubleDOUBLEdouble123', '--priority', '1'],
  );
  expect(added.code, added.stderr).toBe(0);
});
afterAll(async () => {
  await env?.close();
  await stripe?.close();
});

/** A card payment with Stripe's 3-D Secure card: REDIRECT to Stripe's page; its id and PaymentIntent. */
async function challenged() {
  const created = await merchant.post('/api/v1/test/card', cardRequest({ card_number: '4000002760003184' }));
  expect(created.json().status).toBe('REDIRECT');
  const id = created.json().data.transaction_id as string;
  const intent = [...stripe.intents.values()].find(
    (i) => (i.metadata as Record<string, string>).transaction_id === id,
  )!;
  return { id, intent };
}

const statusOf = async (id: string) => (await merchant.get(`/api/test/status/${id}`)).json();
const settles = (id: string) => expect.poll(() => statusOf(id), { timeout: 30_000, interval: 250 });

describe("3-D Secure on Stripe's page, asked before it fails", () => {
  it('settles a payment the cardholder completed at Stripe but never came back from', async () => {
    const { id, intent } = await challenged();
    stripe.complete3ds(String(intent.id), true);
    await settles(id).toMatchObject({ status: 'SUCCESS', message: 'Transaction processed successfully.' });
    expect(intent.status).toBe('succeeded');
  });

  it('closes a challenge nobody finished at Stripe before it fails as abandoned', async () => {
    const { id, intent } = await challenged();
    await settles(id).toMatchObject({ status: 'FAILED', message: 'Transaction abandoned.' });
    expect(intent.status).toBe('canceled');
    // Closed there: the cardholder can no longer complete it.
    expect(stripe.violations).toEqual([]);
  });

  it('closes the challenge at Stripe when ops stop the payment', async () => {
    const { id, intent } = await challenged();
    const answer = await env.client.workflow
      .getHandle(id)
      .executeUpdate(forceFailUpdate, { args: [{ reason: 'Customer called to cancel', actor: 'ops' }] });
    expect(answer).toEqual({ status: 'FAILED', message: 'Customer called to cancel' });
    expect(intent.status).toBe('canceled');
  });

  it('is not kept open by an early or forged visit to the return URL: the deadline still applies', async () => {
    const { id, intent } = await challenged();
    const early = await env.app.inject({ method: 'GET', url: `/api/v1/test/card/return/${id}` });
    expect(early.statusCode).toBeLessThan(500);
    const forged = await env.app.inject({ method: 'GET', url: `/api/v1/test/card/return/${id}` });
    expect(forged.statusCode).toBeLessThan(500);
    await settles(id).toMatchObject({ status: 'FAILED', message: 'Transaction abandoned.' });
    expect(intent.status).toBe('canceled');
    // Each visit asked Stripe once; nothing polled it in between.
    const retrieves = stripe.requests.filter(
      (r) => r.method === 'GET' && r.path === `/v1/payment_intents/${String(intent.id)}`,
    );
    expect(retrieves.length).toBeLessThanOrEqual(3);
  });
});
