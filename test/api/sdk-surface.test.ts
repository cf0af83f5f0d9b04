import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, encryptForMerchant, payinRequest } from '../helpers/merchant-client';
import type { MerchantCredentials } from '../../src/merchants/accounts';
import { paymentTemplates } from '../../src/db/schema/index';
import { withoutCard } from '../helpers/hosted-pages';

/**
 * The vendor SDK's post-payment calls, sent as its API client sends them (docs/api.md): a JSON
 * `Authorization: Bearer` client whose request interceptor encrypts every body into `{"payload"}` unless
 * the call's query parameters carry `Skip-Encryption=true`, and whose GETs put their parameters in the
 * query string. Each answer is checked for the field names the SDK's types declare.
 */
let env: TestEnv;
let merchant: MerchantCredentials;

beforeAll(async () => {
  env = await startTestEnv();
  merchant = await env.createMerchant();
});
afterAll(() => env?.close());

async function sdk(
  method: 'GET' | 'POST',
  path: string,
  options: { params?: Record<string, string>; data?: Record<string, unknown> } = {},
) {
  const query = new URLSearchParams(options.params ?? {}).toString();
  const plain = options.params?.['Skip-Encryption'] === 'true';
  const body =
    options.data === undefined
      ? undefined
      : plain
        ? options.data
        : { payload: encryptForMerchant(options.data, merchant.encryption_key) };
  const response = await env.app.inject({
    method,
    url: query ? `${path}?${query}` : path,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${merchant.test_secret_key}` },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  // The answers are untyped JSON, checked field by field below as the SDK's types name them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: response.statusCode, body: response.json() as Record<string, any> };
}

const keysOf = (value: Record<string, unknown>) => Object.keys(value).sort();
const STATUS_DATA = ['amount', 'currency', 'customer', 'order_id', 'transaction_id'];

describe("the vendor SDK's calls, as it sends them", () => {
  let cardId = '';

  it('Payment.S2S, then refund (plain, ?Skip-Encryption=true)', async () => {
    const paid = await sdk('POST', '/api/v1/test/card', { data: cardRequest({ order_id: 'sdk-1' }) });
    expect(paid.body.status).toBe('SUCCESS');
    cardId = paid.body.data.transaction_id;
    const refunded = await sdk('POST', '/api/v1/test/refund', {
      params: { 'Skip-Encryption': 'true' },
      data: { reason: 'Customer request', transaction_id: cardId },
    });
    expect(refunded.status).toBe(200);
    expect(refunded.body.status).toBe('SUCCESS');
    expect(keysOf(refunded.body.data)).toEqual(
      expect.arrayContaining([...STATUS_DATA, 'refund', 'chargeback']),
    );
    expect(keysOf(refunded.body.data.refund)).toEqual(['refund_date', 'status']);
    expect(keysOf(refunded.body.data.chargeback)).toEqual(['chargeback_date', 'status']);
  });

  it('TXN.transactions and TXN.wallet_transaction (GET, parameters in the query)', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const params = { transaction_start_date: today, transaction_end_date: today };
    const listed = await sdk('GET', '/api/v1/test-transactions', { params });
    expect(listed.status).toBe(200);
    expect(keysOf(listed.body)).toEqual(['data', 'message', 'meta']);
    expect(keysOf(listed.body.meta)).toEqual(
      expect.arrayContaining(['hasNextPage', 'hasPreviousPage', 'totalCount']),
    );
    const row = listed.body.data.find((t: { transaction_id: string }) => t.transaction_id === cardId);
    expect(keysOf(row)).toEqual(
      [
        'amount',
        'card_number',
        'card_type',
        'chargeback_date',
        'converted_amount',
        'converted_currency',
        'country',
        'created_at',
        'currency',
        'email',
        'first_name',
        'last_name',
        'merchant_connector',
        'order_id',
        'payment_link_id',
        'refund_date',
        'status',
        'suspicious_date',
        'transaction_date',
        'transaction_id',
        'transaction_type',
        'user',
      ].sort(),
    );
    expect(typeof row.amount).toBe('string');
    expect(keysOf(row.user)).toEqual(['name', 'user_kyc']);
    const wallet = await sdk('GET', '/api/v1/test-wallet-transactions', { params });
    expect(wallet.status).toBe(200);
    expect(keysOf(wallet.body)).toEqual(['data', 'message', 'meta']);
  });

  it('Payout.get_wallets, Payout.esitimate_fee (encrypted), Payout.payout (encrypted), Payout.payout_status', async () => {
    const wallets = await sdk('GET', '/api/v1/wallet');
    expect(wallets.status).toBe(200);
    for (const wallet of wallets.body.data)
      expect(keysOf(wallet)).toEqual(['amount', 'currency', 'payment_method', 'status', 'wallet_id']);
    const usd = wallets.body.data.find((w: { currency: string }) => w.currency === 'USD');
    const fee = await sdk('POST', '/api/v1/wallet/estimate-payout', {
      data: { wallet_id: usd.wallet_id, amount: 200, card_number: '4222222222222222' },
    });
    expect(fee.status).toBe(200);
    expect(keysOf(fee.body.data)).toEqual(['amount_requried', 'total_fee', 'wallet_balance']);

    const {
      card_cvv: _cvv,
      redirect_url: _redirect,
      ...payout
    } = cardRequest({
      card_number: '4222222222222222',
      amount: 200,
    });
    const created = await sdk('POST', '/api/v1/test/payout', {
      data: { wallet_id: usd.wallet_id, ...payout },
    });
    expect(created.body.status).toBe('SUCCESS');
    const status = await sdk('GET', `/api/v1/test/payout/${created.body.data.transaction_id}/status`);
    expect(status.status).toBe(200);
    expect(keysOf(status.body.data)).toEqual(expect.arrayContaining(STATUS_DATA));
  });

  it('Crypto.currencies (plain) and Crypto.payin without order_id (encrypted)', async () => {
    const currencies = await sdk('POST', '/api/v1/test/crypto/currencies', {
      params: { 'Skip-Encryption': 'true' },
      data: { country: 'GB', amount: 100 },
    });
    expect(currencies.status).toBe(200);
    for (const entry of currencies.body.data)
      expect(keysOf(entry)).toEqual(['code', 'name', 'networks', 'symbol']);
    const { order_id: _orderId, ...request } = payinRequest();
    const payin = await sdk('POST', '/api/v1/test/crypto/payin', { data: request });
    expect(payin.status).toBe(200);
    expect(payin.body.data).toMatchObject({ order_id: null, crypto_currency: expect.any(String) });
  });

  it('Payment.hosted and Payment.APM (encrypted): REDIRECT to our pages', async () => {
    const request = withoutCard(cardRequest());
    for (const path of ['/api/v1/test/hosted/card', '/api/v1/test/apm']) {
      const created = await sdk('POST', path, { data: request });
      expect(created.status).toBe(200);
      expect(created.body.status).toBe('REDIRECT');
      expect(created.body.redirect_url).toMatch(/^http/);
      expect(keysOf(created.body.data)).toEqual(expect.arrayContaining(STATUS_DATA));
      const status = await sdk('GET', `/api/test/status/${created.body.data.transaction_id}`);
      expect(status.body.status).toBe('REDIRECT');
    }
  });

  it('PaymentLink.templates, PaymentLink.create and Crypto.payment_link (encrypted)', async () => {
    await env.database.db.insert(paymentTemplates).values({
      id: 'ptm_sdk_surface_0001',
      merchantId: merchant.merchant_id,
      mode: 'test',
      name: 'SDK',
      redirectUrl: 'https://merchant.example/return',
    });
    const templates = await sdk('GET', '/api/v1/payment-templates');
    expect(templates.status).toBe(200);
    expect(keysOf(templates.body.data[0])).toEqual([
      'payment_template_id',
      'redirect_url',
      'template_id',
      'template_name',
      'template_screenshot',
      'webhook_url',
    ]);
    const id = templates.body.data[0].payment_template_id;
    const link = await sdk('POST', '/api/v1/payment-link', {
      data: { payment_template_id: id, amount: 1000, currency: 'USD' },
    });
    expect(link.status).toBe(200);
    expect(keysOf(link.body)).toEqual(['data', 'message']);
    expect(typeof link.body.data).toBe('string');
    for (const [type, amount] of [
      ['ONRAMP', { fiat_amount: 50 }],
      ['OFFRAMP', { crypto_amount: 20 }],
      ['PAYIN', { fiat_amount: 50 }],
    ] as const) {
      const crypto = await sdk('POST', '/api/v1/crypto/payment-link', {
        data: {
          payment_template_id: id,
          transaction_type: type,
          ...amount,
          fiat_currency: 'USD',
          crypto_currency: 'USDT',
        },
      });
      expect(crypto.status, JSON.stringify(crypto.body)).toBe(200);
      expect(typeof crypto.body.data).toBe('string');
    }
  });
});
