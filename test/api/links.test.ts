import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver } from '../helpers/webhook-receiver';
import { runCliIn } from '../helpers/cli';
import { paymentLinks } from '../../src/db/schema/index';
import { openForm, submitForm } from '../helpers/hosted-pages';
import { eventually } from '../helpers/eventually';

/** Payment templates and card payment links, as the vendor SDK's `PaymentLink` calls send them. */
let env: TestEnv;
let merchant: MerchantClient;
let other: MerchantClient;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let templateId: string;

beforeAll(async () => {
  env = await startTestEnv();
  merchant = merchantClient(env.app, await env.createMerchant());
  other = merchantClient(env.app, await env.createMerchant());
  receiver = await startWebhookReceiver();
  const added = await runCliIn(
    env,
    'templates',
    'add',
    '--merchant',
    merchant.credentials.merchant_id,
    '--mode',
    'test',
    '--name',
    'Spring sale',
    '--redirect-url',
    'https://merchant.example/thanks',
    '--webhook-url',
    receiver.url,
    '--json',
  );
  expect(added.code, added.stderr).toBe(0);
  templateId = JSON.parse(added.stdout).payment_template_id;
});
afterAll(async () => {
  await receiver?.close();
  await env?.close();
});

const customer = {
  first_name: 'Ana',
  last_name: 'Lopez',
  email: 'ana@example.com',
  phone_number: '+34911234567',
  address: 'Calle Mayor 1',
  city: 'Madrid',
  state: 'Madrid',
  zip: '28013',
  country: 'ES',
};

const open = (url: string) => openForm(env.app, url);
const submit = (url: string, fields: Record<string, string>) => submitForm(env.app, url, fields);

async function createLink(body: Record<string, unknown>) {
  const answer = await merchant.postPlain('/api/v1/payment-link', {
    payment_template_id: templateId,
    ...body,
  });
  expect(answer.statusCode, answer.body).toBe(200);
  expect(answer.json().message).toBe('Payment link created successfully.');
  return answer.json().data as string;
}

/** The merchant's test links as the operator lists them (`npx payments templates links --json`). */
async function listedLinks(): Promise<unknown[]> {
  const links = await runCliIn(
    env,
    'templates',
    'links',
    '--merchant',
    merchant.credentials.merchant_id,
    '--mode',
    'test',
    '--json',
  );
  return JSON.parse(links.stdout) as unknown[];
}
describe('payment templates', () => {
  it("lists the key's mode's templates with the SDK's fields, and no one else's", async () => {
    const listed = await merchant.get('/api/v1/payment-templates');
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data).toEqual([
      {
        template_id: 'standard',
        template_name: 'Spring sale',
        payment_template_id: templateId,
        template_screenshot: null,
        redirect_url: 'https://merchant.example/thanks',
        webhook_url: receiver.url,
      },
    ]);
    expect((await other.get('/api/v1/payment-templates')).json().data).toEqual([]);
    const live = await merchant.get('/api/v1/payment-templates', { key: merchant.key('live') });
    expect(live.json().data).toEqual([]);
  });
});

describe('POST /api/v1/payment-link and the link page', () => {
  it('is paid once: customer details, then the card page, then back to the template URL; a second use is refused', async () => {
    const url = await createLink({ amount: 2599, currency: 'EUR', order_id: 'link-1' });
    expect(url).toMatch(/\/api\/v1\/test\/link\/lnk_/);
    const { page } = await open(url);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('25.99 EUR');

    const details = await submit(url, customer);
    expect(details.statusCode).toBe(303);
    expect(details.headers.location).toMatch(/\/api\/v1\/test\/hosted\/card\/PA/);
    const card = await submit(details.headers.location!, {
      card_number: '4242424242424242',
      card_expiry_month: '10',
      card_expiry_year: String(new Date().getUTCFullYear() + 2),
      card_cvv: '123',
    });
    const back = new URL(card.headers.location!);
    expect(back.origin + back.pathname).toBe('https://merchant.example/thanks');
    expect(back.searchParams.get('status')).toBe('SUCCESS');
    expect(back.searchParams.get('order_id')).toBe('link-1');
    const id = back.searchParams.get('transaction_id')!;

    const status = await merchant.get(`/api/test/status/${id}`);
    expect(status.json()).toMatchObject({
      status: 'SUCCESS',
      data: { amount: 2599, currency: 'EUR', customer: { first_name: 'Ana', email: 'ana@example.com' } },
    });
    const [link] = await env.database.db
      .select()
      .from(paymentLinks)
      .where(eq(paymentLinks.orderId, 'link-1'));
    expect(link).toMatchObject({ status: 'used', transactionId: id });
    const listed = await merchant.get('/api/v1/test-transactions?order_id=link-1');
    expect(listed.json().data[0]).toMatchObject({ transaction_id: id, payment_link_id: link!.id });

    const again = await env.app.inject({ url: new URL(url).pathname });
    expect(again.statusCode).toBe(410);
    expect(again.body).toContain('This payment link has already been used.');
    expect(await listedLinks()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ link_id: link!.id, status: 'used', transaction_id: id }),
      ]),
    );
  });

  it('asks for the amount when the link has none, with errors next to the fields', async () => {
    const url = await createLink({ currency: 'USD' });
    const refused = await submit(url, { ...customer, amount: '12.345', email: 'nope' });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('id="amount-error"');
    expect(refused.body).toContain('id="email-error"');
    // Worded by the labels the customer sees, not by the API's field names.
    expect(refused.body).toContain('Email must be a valid email address.');
    expect(refused.body).toContain('Amount must be a positive amount with at most 2 decimals.');
    expect(refused.body).not.toMatch(/The \w+ field/);
    expect(refused.body).toContain('value="Ana"');
    const details = await submit(url, { ...customer, amount: '12.30' });
    expect(details.statusCode).toBe(303);
    const id = new URL(details.headers.location!).pathname.split('/').at(-1)!;
    const status = await merchant.get(`/api/test/status/${id}`);
    expect(status.json()).toMatchObject({ status: 'REDIRECT', data: { amount: 1230, currency: 'USD' } });
  });

  it('expires at expiry_date: the page refuses it and the workflow closes it', async () => {
    const url = await createLink({
      amount: 500,
      currency: 'USD',
      expiry_date: new Date(Date.now() + 1500).toISOString(),
    });
    const linkId = new URL(url).pathname.split('/').at(-1)!;
    const deadline = Date.now() + 20_000;
    let link;
    do {
      await new Promise((resolve) => setTimeout(resolve, 200));
      [link] = await env.database.db.select().from(paymentLinks).where(eq(paymentLinks.id, linkId));
    } while (link?.status !== 'expired' && Date.now() < deadline);
    expect(link?.status).toBe('expired');
    const page = await env.app.inject({ url: new URL(url).pathname });
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain('This payment link has expired.');
  });

  it('is expired now in test mode (docs/sandbox.md): its page refuses it at once; a used link stays used', async () => {
    const url = await createLink({ amount: 700, currency: 'USD', order_id: 'link-expire-now' });
    const linkId = new URL(url).pathname.split('/').at(-1)!;
    const expired = await merchant.postPlain(`/api/v1/test/payment-link/${linkId}/expire`, {});
    expect(expired.statusCode, expired.body).toBe(200);
    expect(expired.json()).toEqual({
      message: 'Payment link expired.',
      data: { link_id: linkId, status: 'expired' },
    });
    const [link] = await env.database.db.select().from(paymentLinks).where(eq(paymentLinks.id, linkId));
    expect(link?.status).toBe('expired');
    const page = await env.app.inject({ url: new URL(url).pathname });
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain('This payment link has expired.');
    // Again: it answers as it stands.
    const again = await merchant.postPlain(`/api/v1/test/payment-link/${linkId}/expire`, {});
    expect(again.json().data).toEqual({ link_id: linkId, status: 'expired' });

    // A used link is not expired after the fact.
    const usedUrl = await createLink({ amount: 800, currency: 'USD', order_id: 'link-expire-used' });
    const usedId = new URL(usedUrl).pathname.split('/').at(-1)!;
    expect((await submit(usedUrl, customer)).statusCode).toBe(303);
    await eventually('the link projected as used', async () => {
      const [row] = await env.database.db.select().from(paymentLinks).where(eq(paymentLinks.id, usedId));
      return row?.status === 'used' ? true : undefined;
    });
    const late = await merchant.postPlain(`/api/v1/test/payment-link/${usedId}/expire`, {});
    expect(late.json()).toEqual({
      message: 'This payment link has already been used.',
      data: { link_id: usedId, status: 'used' },
    });

    // Not another merchant's, not in live mode.
    const other = merchantClient(env.app, await env.createMerchant());
    const foreign = await other.postPlain(`/api/v1/test/payment-link/${usedId}/expire`, {});
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().message).toBe('Payment link not found.');
    const live = await merchant.postPlain(
      `/api/v1/live/payment-link/${linkId}/expire`,
      {},
      {
        key: merchant.key('live'),
      },
    );
    expect(live.statusCode).toBe(404);
  });

  it('refuses what it cannot make a link of, with clear messages', async () => {
    const refused = async (body: Record<string, unknown>, field: string, message: string) => {
      const answer = await merchant.postPlain('/api/v1/payment-link', {
        payment_template_id: templateId,
        ...body,
      });
      expect(answer.statusCode).toBe(422);
      expect(answer.json().errors[field]).toContain(message);
    };
    await refused(
      { payment_template_id: 'ptm_nope' },
      'payment_template_id',
      'The selected payment template id is invalid.',
    );
    await refused({ amount: 100 }, 'currency', 'The currency field is required with an amount.');
    await refused(
      { expiry_date: '2020-01-01' },
      'expiry_date',
      'The expiry date field must be in the future and within 90 days.',
    );
    await refused(
      { expiry_date: '2026-02-30' },
      'expiry_date',
      'The expiry date field must be a date (YYYY-MM-DD) or an ISO 8601 time.',
    );
    // Another merchant cannot make links on this template.
    const foreign = await other.postPlain('/api/v1/payment-link', { payment_template_id: templateId });
    expect(foreign.statusCode).toBe(422);
  });

  it('makes a crypto payin link: the customer gives their details and goes to the crypto checkout', async () => {
    const answer = await merchant.postPlain('/api/v1/crypto/payment-link', {
      payment_template_id: templateId,
      transaction_type: 'PAYIN',
      fiat_amount: '40',
      fiat_currency: 'USD',
      crypto_currency: 'USDT',
      order_id: 'crypto-link-1',
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const url = answer.json().data as string;
    const { page } = await open(url);
    expect(page.body).toContain('Pay with crypto');
    expect(page.body).toContain('40 USD in USDT');
    // USDT is on several networks and the link names none: the customer picks one.
    expect(page.body).toMatch(/<label for="crypto_network">USDT network \(.*TRON.*\)<\/label>/);
    const { first_name, last_name, email, phone_number, country, address } = customer;
    const refused = await submit(url, {
      first_name,
      last_name,
      email: 'nope',
      phone_number,
      country,
      address,
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('id="email-error"');
    const noNetwork = await submit(url, { first_name, last_name, email, phone_number, country, address });
    expect(noNetwork.statusCode).toBe(422);
    expect(noNetwork.body).toContain('id="crypto_network-error"');
    const made = await submit(url, {
      first_name,
      last_name,
      email,
      phone_number,
      country,
      address,
      crypto_network: 'TRON',
    });
    expect(made.statusCode).toBe(303);
    expect(made.headers.location).toMatch(/\/api\/v1\/test\/crypto\/checkout\/PA/);
    const listed = await merchant.get('/api/v1/test-transactions?order_id=crypto-link-1');
    expect(listed.json().data[0]).toMatchObject({
      transaction_type: 'crypto_payin',
      amount: '40',
      currency: 'USD',
    });
    expect(listed.json().data[0].payment_link_id).toMatch(/^lnk_/);
    // The customer pays at the checkout: the payin settles and the template's webhook URL hears of it.
    const id = new URL(made.headers.location!).pathname.split('/').at(-1)!;
    const crypto = (await merchant.get(`/api/test/status/${id}`)).json().data.crypto_amount;
    const paid = await merchant.postPlain(`/api/v1/test/crypto/${id}/deposit`, { amount: crypto });
    expect(paid.json()).toMatchObject({ status: 'SUCCESS' });
    // The operator's list of links shows a crypto link by its own terms.
    expect(await listedLinks()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'PAYIN', order_id: 'crypto-link-1', amount: '40', currency: 'USD' }),
      ]),
    );
    const deadline = Date.now() + 20_000;
    while (
      !receiver.received.some((w) => (w.json.data as { transaction_id?: string }).transaction_id === id)
    ) {
      if (Date.now() > deadline) throw new Error('no webhook for the link payin');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it('makes ramp links, asking for the wallet address, and refuses a link without its amount', async () => {
    const answer = await merchant.postPlain('/api/v1/crypto/payment-link', {
      payment_template_id: templateId,
      transaction_type: 'ONRAMP',
      fiat_amount: '50',
      fiat_currency: 'USD',
      crypto_currency: 'USDT',
      crypto_network: 'TRON',
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const url = answer.json().data as string;
    const { first_name, last_name, email, phone_number, country } = customer;
    const bad = await submit(url, {
      first_name,
      last_name,
      email,
      phone_number,
      country,
      wallet_address: 'x',
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('id="wallet_address-error"');
    const made = await submit(url, {
      first_name,
      last_name,
      email,
      phone_number,
      country,
      wallet_address: 'TQ5NqkgNzG8mJvFz6cWh2hKq6dNeXyGiXb',
    });
    expect(made.statusCode, made.body).toBe(303);

    const missing = await merchant.postPlain('/api/v1/crypto/payment-link', {
      payment_template_id: templateId,
      transaction_type: 'OFFRAMP',
      fiat_amount: '50',
      fiat_currency: 'USD',
      crypto_currency: 'USDT',
    });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().errors).toMatchObject({
      crypto_amount: ['The crypto amount field is required when transaction type is OFFRAMP.'],
      fiat_amount: ['The fiat amount field is not allowed when transaction type is OFFRAMP.'],
    });
    const unknownCoin = await merchant.postPlain('/api/v1/crypto/payment-link', {
      payment_template_id: templateId,
      transaction_type: 'PAYIN',
      fiat_amount: '50',
      fiat_currency: 'USD',
      crypto_currency: 'NOPE',
    });
    expect(unknownCoin.statusCode).toBe(422);
    expect(unknownCoin.json().errors.crypto_currency).toBeDefined();
  });

  it('refuses at creation what could never be paid, and a second link with an order id', async () => {
    const refused = async (path: string, body: Record<string, unknown>, field: string, message: string) => {
      const answer = await merchant.postPlain(path, { payment_template_id: templateId, ...body });
      expect(answer.statusCode, answer.body).toBe(422);
      expect(answer.json().errors[field]).toContain(message);
    };
    const payin = { transaction_type: 'PAYIN', crypto_currency: 'USDT', crypto_network: 'TRON' };
    await refused(
      '/api/v1/crypto/payment-link',
      { ...payin, fiat_amount: '25', fiat_currency: 'GBP' },
      'fiat_currency',
      'There is no GBP wallet to credit in test mode.',
    );
    await refused(
      '/api/v1/crypto/payment-link',
      { ...payin, fiat_amount: '25.123', fiat_currency: 'USD' },
      'fiat_amount',
      'The fiat amount field must have at most 2 decimal places.',
    );
    const tooMuch = await merchant.postPlain('/api/v1/crypto/payment-link', {
      payment_template_id: templateId,
      ...payin,
      transaction_type: 'ONRAMP',
      fiat_amount: '1000000',
      fiat_currency: 'USD',
    });
    expect(tooMuch.statusCode).toBe(422);
    expect(tooMuch.json().errors.fiat_amount[0]).toMatch(/must be between/);

    await createLink({ amount: 100, currency: 'USD', order_id: 'once-only' });
    const second = await merchant.postPlain('/api/v1/payment-link', {
      payment_template_id: templateId,
      amount: 100,
      currency: 'USD',
      order_id: 'once-only',
    });
    expect(second.statusCode).toBe(409);
    expect(second.json().message).toBe('The order id has already been taken.');
  });

  it('refuses an amount past what the API takes, on the page, instead of failing', async () => {
    const url = await createLink({ currency: 'USD' });
    const huge = await submit(url, { ...customer, amount: '99999999999999999' });
    expect(huge.statusCode).toBe(422);
    expect(huge.body).toContain('id="amount-error"');
    const unknown = await env.app.inject({ url: '/api/v1/test/link/lnk_nope' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('Payment link not found');
  });
});
