import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver, verifyWebhook } from '../helpers/webhook-receiver';
import {
  openForm,
  postOpenedForm,
  submitForm,
  webhookFor as webhookOf,
  withoutCard,
} from '../helpers/hosted-pages';
import { sandboxOperations, terminals } from '../../src/db/schema/index';

/**
 * Alternative payment methods as the vendor SDK's `Payment.APM` sends them (the card request without the
 * card, encrypted), then the hosted pages as a browser without JavaScript posts them.
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

const apmRequest = (overrides: Record<string, unknown> = {}) =>
  withoutCard(cardRequest({ webhook_url: receiver.url, ...overrides }));

async function createApm(overrides: Record<string, unknown> = {}) {
  const created = await merchant.post('/api/v1/test/apm', apmRequest(overrides));
  expect(created.statusCode, created.body).toBe(200);
  return created.json() as { status: string; redirect_url: string; data: { transaction_id: string } };
}

const openPage = (url: string) => openForm(env.app, url);
const post = (url: string, fields: Record<string, string>) => submitForm(env.app, url, fields);
const webhookFor = (transactionId: string) => webhookOf(receiver, transactionId);

describe('POST /api/v1/{mode}/apm and its pages', () => {
  it('pays by bank redirect: methods page, provider page, approve, back to the merchant with SUCCESS', async () => {
    const created = await createApm({ order_id: 'apm-bank' });
    const id = created.data.transaction_id;
    expect(created).toMatchObject({
      status: 'REDIRECT',
      redirect_url: expect.stringMatching(/\/api\/v1\/test\/apm\/PA/),
      data: { amount: 1050, currency: 'USD', payment_method: null },
    });
    const { page } = await openPage(created.redirect_url);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('value="bank_redirect"');
    expect(page.body).toContain('value="wallet"');

    const chosen = await post(created.redirect_url, { method: 'bank_redirect' });
    expect(chosen.statusCode).toBe(303);
    expect(chosen.headers.location).toContain(`/api/v1/test/apm/provider/${id}`);
    const provider = await openPage(chosen.headers.location!);
    expect(provider.page.body).toContain('Bank transfer');
    expect(provider.page.body).toContain('SANDBOX*BANK');

    const approved = await post(chosen.headers.location!, { decision: 'approve' });
    expect(approved.statusCode).toBe(303);
    expect(Object.fromEntries(new URL(approved.headers.location!).searchParams)).toEqual({
      transaction_id: id,
      order_id: 'apm-bank',
      status: 'SUCCESS',
    });
    const status = await merchant.get(`/api/test/status/${id}`);
    expect(status.json()).toMatchObject({
      status: 'SUCCESS',
      data: { payment_method: 'bank_redirect', descriptor: 'SANDBOX*BANK' },
    });
    const webhook = await webhookFor(id);
    expect(webhook.json).toMatchObject({ status: 'SUCCESS', data: { payment_method: 'bank_redirect' } });
    expect(verifyWebhook(webhook, merchant.credentials.webhook_secret)).toEqual({
      hash: true,
      signature: true,
    });
    // The provider was asked once under the payment's key, and settled once.
    const books = await env.database.db
      .select()
      .from(sandboxOperations)
      .where(eq(sandboxOperations.connector, 'sandbox-bank'));
    expect(books.filter((b) => b.idempotencyKey.startsWith(`${id}:`))).toEqual([
      expect.objectContaining({ state: 'approved' }),
    ]);
    const listed = await merchant.get('/api/v1/test-transactions?transaction_type=apm&order_id=apm-bank');
    expect(listed.json().data[0]).toMatchObject({
      transaction_type: 'apm',
      card_number: null,
      merchant_connector: { name: 'sandbox-bank' },
    });
  });

  it('declines in the wallet with the provider message', async () => {
    const created = await createApm();
    const chosen = await post(created.redirect_url, { method: 'wallet' });
    const declined = await post(chosen.headers.location!, { decision: 'decline' });
    expect(new URL(declined.headers.location!).searchParams.get('status')).toBe('FAILED');
    const status = await merchant.get(`/api/test/status/${created.data.transaction_id}`);
    expect(status.json()).toMatchObject({
      status: 'FAILED',
      message: 'Payment declined in the wallet.',
      data: { payment_method: 'wallet', descriptor: 'SANDBOX*WALLET' },
    });
  });

  it('fails a method the pinned terminal does not take', async () => {
    const [wallet] = await env.database.db
      .select({ id: terminals.id })
      .from(terminals)
      .where(
        and(
          eq(terminals.merchantId, merchant.credentials.merchant_id),
          eq(terminals.mode, 'test'),
          eq(terminals.connector, 'sandbox-wallet'),
        ),
      );
    const created = await createApm({ terminal_id: wallet!.id });
    const chosen = await post(created.redirect_url, { method: 'bank_redirect' });
    expect(new URL(chosen.headers.location!).searchParams.get('status')).toBe('FAILED');
    const status = await merchant.get(`/api/test/status/${created.data.transaction_id}`);
    expect(status.json()).toMatchObject({
      status: 'FAILED',
      message: 'This payment method is not available.',
    });
  });

  it('takes one method: a second pick and a forged form change nothing', async () => {
    const created = await createApm();
    // The same open page submitted twice (a double click, a second tab).
    const opened = await openPage(created.redirect_url);
    const submit = (method: string) => postOpenedForm(env.app, opened, { method });
    const first = await submit('wallet');
    const again = await submit('bank_redirect');
    // The methods page now sends the customer on to the provider picked first.
    expect(again.headers.location).toBe(first.headers.location);
    const forged = await env.app.inject({
      method: 'POST',
      url: new URL(created.redirect_url).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'method=wallet',
    });
    expect(forged.statusCode).toBe(403);
    const unknown = await submit('crypto');
    expect(unknown.statusCode).toBe(422);
    expect(unknown.body).toContain('Choose one of the payment methods offered.');
    const status = await merchant.get(`/api/test/status/${created.data.transaction_id}`);
    expect(status.json().data.payment_method).toBe('wallet');
  });

  it('cannot be refunded, as only cards and payins can', async () => {
    const created = await createApm();
    const chosen = await post(created.redirect_url, { method: 'bank_redirect' });
    await post(chosen.headers.location!, { decision: 'approve' });
    const refund = await merchant.postPlain('/api/v1/test/refund', {
      transaction_id: created.data.transaction_id,
      reason: 'test',
    });
    expect(refund.statusCode).toBe(422);
    expect(refund.json().message).toBe('This transaction cannot be refunded.');
  });
});
