import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver, verifyWebhook } from '../helpers/webhook-receiver';
import { cardDataScan } from '../helpers/card-scan';
import {
  openForm,
  postOpenedForm,
  submitForm,
  webhookFor as webhookOf,
  withoutCard,
} from '../helpers/hosted-pages';

/**
 * The hosted card payment as the vendor SDK's `Payment.hosted` sends it (the card request without the
 * card, encrypted) and the payment page's form as a browser without JavaScript posts it.
 */
let env: TestEnv;
let merchant: MerchantClient;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  env = await startTestEnv();
  merchant = merchantClient(env.app, await env.createMerchant());
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await env?.close();
});

const CVV = '7391';
const year = String(new Date().getUTCFullYear() + 3);

const hostedRequest = (overrides: Record<string, unknown> = {}) =>
  withoutCard(cardRequest({ webhook_url: receiver.url, ...overrides }));

async function createHosted(overrides: Record<string, unknown> = {}) {
  const created = await merchant.post('/api/v1/test/hosted/card', hostedRequest(overrides));
  expect(created.statusCode, created.body).toBe(200);
  return created.json() as { status: string; redirect_url: string; data: { transaction_id: string } };
}

const openPage = (url: string) => openForm(env.app, url);
const submit = (url: string, fields: Record<string, string>) => submitForm(env.app, url, fields);

const card = (number: string, overrides: Record<string, string> = {}) => ({
  card_number: number,
  card_expiry_month: '09',
  card_expiry_year: year,
  card_cvv: CVV,
  ...overrides,
});

describe('POST /api/v1/{mode}/hosted/card and the payment page', () => {
  it('ends a page or a 3-D Secure challenge nobody answers at once in test mode, as its time running out would', async () => {
    const expire = (id: string, client = merchant, mode = 'test') =>
      client.postPlain(`/api/v1/${mode}/transactions/${id}/expire`, {});
    const outcome = async (id: string) =>
      expect
        .poll(async () => (await merchant.get(`/api/test/status/${id}`)).json(), { timeout: 15_000 })
        .toMatchObject({ status: 'FAILED', message: 'Transaction abandoned.' });
    // The hosted card page nobody fills in.
    const page = await createHosted();
    const ended = await expire(page.data.transaction_id);
    expect(ended.statusCode, ended.payload).toBe(200);
    await outcome(page.data.transaction_id);
    // A 3-D Secure challenge nobody answers.
    const challenged = (
      await merchant.post('/api/v1/test/card', cardRequest({ card_number: '4111111111111111' }))
    ).json();
    expect(challenged.status).toBe('REDIRECT');
    expect((await expire(challenged.data.transaction_id)).statusCode).toBe(200);
    await outcome(challenged.data.transaction_id);
    // Nothing waits any more; another merchant's or live mode's has none to end.
    const again = await expire(challenged.data.transaction_id);
    expect(again.statusCode).toBe(422);
    expect(again.json().message).toBe('This transaction waits on no customer.');
    const stranger = merchantClient(env.app, await env.createMerchant());
    expect((await expire(page.data.transaction_id, stranger)).statusCode).toBe(404);
    expect((await expire(page.data.transaction_id, merchant, 'live')).statusCode).toBe(404);
  });

  it('answers REDIRECT to the payment page, whose form shows the amount and merchant', async () => {
    const created = await createHosted({ order_id: 'hosted-1' });
    expect(created).toMatchObject({
      status: 'REDIRECT',
      redirect_url: expect.stringMatching(/\/api\/v1\/test\/hosted\/card\/PA/),
      data: { transaction_id: expect.any(String), amount: 1050, currency: 'USD', order_id: 'hosted-1' },
    });
    const { page, csrf } = await openPage(created.redirect_url);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.body).toContain('10.50 USD');
    expect(page.body).toMatch(/<label for="card_number">Card number<\/label>/);
    expect(csrf).toBeDefined();
    const status = await merchant.get(`/api/test/status/${created.data.transaction_id}`);
    expect(status.json()).toMatchObject({ status: 'REDIRECT', redirect_url: created.redirect_url });
  });

  it('pays a card without a challenge: back to the merchant with SUCCESS, signed webhook, masked card', async () => {
    const created = await createHosted({ order_id: 'hosted-ok' });
    const id = created.data.transaction_id;
    const paid = await submit(created.redirect_url, card('4242 4242 4242 4242'));
    expect(paid.statusCode).toBe(303);
    const back = new URL(paid.headers.location!);
    expect(back.origin + back.pathname).toBe('https://merchant.example/return');
    expect(Object.fromEntries(back.searchParams)).toEqual({
      transaction_id: id,
      order_id: 'hosted-ok',
      status: 'SUCCESS',
    });
    const webhook = await webhookFor(id);
    expect(webhook.json).toMatchObject({ status: 'SUCCESS' });
    expect(verifyWebhook(webhook, merchant.credentials.webhook_secret)).toEqual({
      hash: true,
      signature: true,
    });
    const listed = await merchant.get('/api/v1/test-transactions?order_id=hosted-ok');
    expect(listed.json().data[0]).toMatchObject({
      card_number: '424242******4242',
      card_type: 'VISA',
      status: 'SUCCESS',
    });
  });

  it('marks a card typed on the page that already paid this merchant as is_card_WL', async () => {
    const paid = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ order_id: 'hosted-wl-first', card_number: '4000000000000119' }),
    );
    expect(paid.json().status).toBe('SUCCESS');
    const again = await createHosted({ order_id: 'hosted-wl-again' });
    expect((await submit(again.redirect_url, card('4000000000000119'))).statusCode).toBe(303);
    const fresh = await createHosted({ order_id: 'hosted-wl-fresh' });
    expect((await submit(fresh.redirect_url, card('4000000000000002'))).statusCode).toBe(303);
    const flag = async (id: string) =>
      (await merchant.get(`/api/test/status/${id}`)).json().data.is_card_WL as boolean;
    expect(await flag(again.data.transaction_id)).toBe(true);
    expect(await flag(fresh.data.transaction_id)).toBe(false);
  });

  it('sends a card that needs 3-D Secure to the challenge, which completes it', async () => {
    const created = await createHosted();
    const id = created.data.transaction_id;
    const entered = await submit(created.redirect_url, card('4111111111111111'));
    expect(entered.statusCode).toBe(303);
    expect(entered.headers.location).toContain(`/api/v1/test/card/checkout/${id}`);
    const approved = await submitDecision(entered.headers.location!, 'approve');
    expect(new URL(approved.headers.location!).searchParams.get('status')).toBe('SUCCESS');
  });

  it('declines a declined card, with its message on the status', async () => {
    const created = await createHosted();
    const declined = await submit(created.redirect_url, card('4000000000000002'));
    expect(new URL(declined.headers.location!).searchParams.get('status')).toBe('FAILED');
    const status = await merchant.get(`/api/test/status/${created.data.transaction_id}`);
    expect(status.json()).toMatchObject({ status: 'FAILED', message: 'Card declined.' });
  });

  it('refuses a wrong card next to its field, never echoing it, and takes the corrected one', async () => {
    const created = await createHosted();
    const refused = await submit(
      created.redirect_url,
      card('4242424242424241', { card_expiry_month: '13', card_cvv: '12' }),
    );
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('id="card_number-error">Card number must be a valid card number.');
    expect(refused.body).toContain('aria-describedby="card_expiry_month-error"');
    expect(refused.body).toContain('id="card_cvv-error"');
    expect(refused.body).not.toContain('4242424242424241');
    // The expiry is kept; the number and CVV are typed again.
    expect(refused.body).toContain(`value="${year}"`);
    const expired = await submit(
      created.redirect_url,
      card('4242424242424242', { card_expiry_year: '2020' }),
    );
    expect(expired.statusCode).toBe(422);
    expect(expired.body).toContain('The card has expired.');
    expect(expired.body).toContain('Read as Visa ending 4242');
    expect(expired.body).not.toContain('4242424242424242');
    const paid = await submit(created.redirect_url, card('4242424242424242'));
    expect(new URL(paid.headers.location!).searchParams.get('status')).toBe('SUCCESS');
  });

  it('takes one card per payment: a second submission shows where the first one went', async () => {
    const created = await createHosted();
    const opened = await openPage(created.redirect_url);
    const post = (number: string) => postOpenedForm(env.app, opened, card(number));
    const [first, second] = await Promise.all([post('4242424242424242'), post('4000000000000002')]);
    const statuses = [first, second].map((r) => r.statusCode);
    expect(statuses.every((s) => s === 303)).toBe(true);
    const status = await merchant.get(`/api/test/status/${created.data.transaction_id}`);
    const final = status.json().status;
    expect(['SUCCESS', 'FAILED']).toContain(final);
    // Exactly one card was authorized: one terminal answer, and the projection names that card.
    const listed = await merchant.get(`/api/v1/test-transactions?limit=100`);
    const row = listed
      .json()
      .data.find((t: { transaction_id: string }) => t.transaction_id === created.data.transaction_id);
    expect(row.card_number).toBe(final === 'SUCCESS' ? '424242******4242' : '400000******0002');
  });

  it('refuses a form without its CSRF token, and an unknown transaction', async () => {
    const created = await createHosted();
    const forged = await env.app.inject({
      method: 'POST',
      url: new URL(created.redirect_url).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(card('4242424242424242')).toString(),
    });
    expect(forged.statusCode).toBe(403);
    const unknown = await env.app.inject({ url: '/api/v1/test/hosted/card/PAnope' });
    expect(unknown.statusCode).toBe(404);
  });

  it('validates the create like a card payment without the card', async () => {
    const missing = await merchant.post('/api/v1/test/hosted/card', hostedRequest({ amount: undefined }));
    expect(missing.statusCode).toBe(422);
    expect(missing.json().errors.amount).toBeDefined();
  });

  it('leaves no card number or CVV anywhere but tombstones in the vault', async () => {
    await receiver.waitFor(4);
    const scan = await cardDataScan(env);
    for (const [where, text] of Object.entries(scan.places)) {
      for (const number of ['4242424242424242', '4111111111111111', '4000000000000002'])
        expect(text, `${number} in ${where}`).not.toContain(number);
      expect(text, `CVV in ${where}`).not.toMatch(new RegExp(`["':]${CVV}["]`));
    }
    expect(scan.vault).toMatchObject({ pans: 0, cvvs: 0, expiries: 0 });
  });
});

const webhookFor = (transactionId: string) => webhookOf(receiver, transactionId);
const submitDecision = (url: string, decision: 'approve' | 'decline') => submit(url, { decision });
