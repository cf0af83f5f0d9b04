import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { merchantClient, payinRequest, rampRequest, type MerchantClient } from '../helpers/merchant-client';
import { openHostedPage } from '../helpers/hosted-form';
import { cryptoDeposits, ledgerEntries, wallets } from '../../src/db/schema/index';
import type { MerchantCredentials } from '../../src/merchants/accounts';
import { insertPayinTransaction } from '../helpers/fixtures';

let env: TestEnv;
let merchant: MerchantClient;
let credentials: MerchantCredentials;

beforeAll(async () => {
  env = await startTestEnv();
  credentials = await env.createMerchant();
  merchant = merchantClient(env.app, credentials);
});
afterAll(() => env?.close());

const deposit = (id: string, amount: unknown, txHash?: string) =>
  merchant.postPlain(`/api/v1/test/crypto/${id}/deposit`, { amount, ...(txHash ? { tx_hash: txHash } : {}) });

async function usdBalance(): Promise<bigint> {
  const id = credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
  const [wallet] = await env.database.db.select().from(wallets).where(eq(wallets.id, id));
  return wallet!.available;
}

describe('POST /api/v1/{mode}/crypto/payin', () => {
  it('answers REDIRECT to the checkout with the expected crypto amount and a deposit address', async () => {
    const response = await merchant.post('/api/v1/test/crypto/payin', payinRequest({ amount: '100.50' }));
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.status).toBe('REDIRECT');
    expect(body.redirect_url).toBe(
      `http://payments.test/api/v1/test/crypto/checkout/${body.data.transaction_id}`,
    );
    expect(body.data).toMatchObject({
      amount: 100.5,
      currency: 'USD',
      crypto_currency: 'USDT',
      crypto_network: 'TRON',
      crypto_amount: 100.5,
      crypto_paid_amount: 0,
      crypto_payment_status: null,
      refund: { status: false, refund_date: null },
    });
    // A well-formed T-address (base58check), as TRON shows one.
    expect(body.data.deposit_address).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    expect(Date.parse(body.data.expires_at) - Date.now()).toBeGreaterThan(59 * 60 * 1000);
  });

  it('settles an exact deposit as FULLPAID and credits the wallet exactly once', async () => {
    const before = await usdBalance();
    const created = (await merchant.post('/api/v1/test/crypto/payin', payinRequest({ amount: 25 }))).json();
    const id = created.data.transaction_id;
    const paid = await deposit(id, 25, 'abc123');
    expect(paid.statusCode).toBe(200);
    expect(paid.json()).toMatchObject({
      status: 'SUCCESS',
      data: { crypto_payment_status: 'FULLPAID', crypto_paid_amount: 25 },
    });
    const again = await deposit(id, 25, 'abc123');
    expect(again.statusCode).toBe(200);
    expect(again.json().deposit).toEqual({ tx_hash: 'abc123', amount: 25, disposition: 'duplicate' });
    expect(await usdBalance()).toBe(before + 2500n);
    const credits = await env.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.reference, id));
    expect(credits.map((e) => [e.step, e.amount])).toEqual([['credit', 2500n]]);
  });

  it('holds a deposit that arrives after the transaction closed, with the reason', async () => {
    const created = (await merchant.post('/api/v1/test/crypto/payin', payinRequest({ amount: 12 }))).json();
    const id = created.data.transaction_id;
    expect((await deposit(id, 12, 'ontime')).json().status).toBe('SUCCESS');
    await env.client.workflow.getHandle(id).result();
    const late = await deposit(id, 3, 'late1');
    expect(late.statusCode).toBe(200);
    expect(late.json()).toMatchObject({
      status: 'SUCCESS',
      data: { crypto_paid_amount: 12 },
      deposit: { tx_hash: 'late1', amount: 3, disposition: 'held' },
    });
    const rows = await env.database.db
      .select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, id));
    expect(rows.find((r) => r.txHash === 'late1')).toMatchObject({
      disposition: 'held',
      countedInPayment: false,
      reason: 'Arrived after the transaction closed.',
    });
  });

  it('refuses a payin whose wallet is inactive', async () => {
    const idle = await env.createMerchant();
    const walletId = idle.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
    await env.database.db.update(wallets).set({ status: 'Inactive' }).where(eq(wallets.id, walletId));
    const response = await merchantClient(env.app, idle).post('/api/v1/test/crypto/payin', payinRequest());
    expect(response.statusCode).toBe(422);
    expect(response.json().message).toBe('The USD wallet to credit is inactive.');
  });

  it('refuses an asset the catalogue blocks in the customer country, as the currencies list leaves it out', async () => {
    for (const [path, request] of [
      ['/api/v1/test/crypto/payin', payinRequest({ crypto_network: 'BINANCE_SMART_CHAIN', country: 'US' })],
      ['/api/v1/test/crypto', rampRequest({ crypto_network: 'BINANCE_SMART_CHAIN', country: 'US' })],
    ] as const) {
      const response = await merchant.post(path, request);
      expect(response.statusCode).toBe(422);
      expect(response.json().errors.country).toEqual(['USDT on BINANCE_SMART_CHAIN is not available in US.']);
    }
  });

  it('adds up two deposits and reports OVERPAID when more arrives', async () => {
    const created = (await merchant.post('/api/v1/test/crypto/payin', payinRequest({ amount: 10 }))).json();
    const id = created.data.transaction_id;
    const first = await deposit(id, '4');
    expect(first.json()).toMatchObject({
      status: 'REDIRECT',
      data: { crypto_payment_status: 'UNDERPAID', crypto_paid_amount: 4 },
    });
    // The checkout's test form offers what is still owed.
    const page = await env.app.inject({ url: `/api/v1/test/crypto/checkout/${id}` });
    expect(page.body).toContain('name="amount" inputmode="decimal" value="6"');
    const second = await deposit(id, '6.5');
    expect(second.json()).toMatchObject({
      status: 'SUCCESS',
      data: { crypto_payment_status: 'OVERPAID', crypto_paid_amount: 10.5 },
    });
  });

  it('closes an UNDERPAID window now in test mode, which then ends as its window would have', async () => {
    const created = (await merchant.post('/api/v1/test/crypto/payin', payinRequest({ amount: 10 }))).json();
    const id = created.data.transaction_id as string;
    await deposit(id, '4');
    const balance = await usdBalance();
    const closed = await merchant.postPlain(`/api/v1/test/crypto/${id}/close-window`, {});
    expect(closed.statusCode, closed.payload).toBe(200);
    expect(closed.json().data).toMatchObject({ transaction_id: id, crypto_paid_amount: 4 });
    // As at the window's end: an underpayment fails, its deposit refunded, nothing credited.
    await expect
      .poll(async () => (await merchant.get(`/api/test/status/${id}`)).json(), { timeout: 15_000 })
      .toMatchObject({ status: 'FAILED', data: { crypto_payment_status: 'UNDERPAID' } });
    const [kept] = await env.database.db
      .select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, id));
    expect(kept).toMatchObject({ disposition: 'refunded' });
    expect(await usdBalance()).toBe(balance);
    // Closed once; a transaction with no window, or one of another merchant, has none to close.
    const again = await merchant.postPlain(`/api/v1/test/crypto/${id}/close-window`, {});
    expect(again.statusCode).toBe(422);
    expect(again.json().message).toBe('The deposit window is not open.');
    const stranger = merchantClient(env.app, await env.createMerchant());
    expect((await stranger.postPlain(`/api/v1/test/crypto/${id}/close-window`, {})).statusCode).toBe(404);
    expect((await merchant.postPlain(`/api/v1/live/crypto/${id}/close-window`, {})).statusCode).toBe(404);
  });

  it("asks a deposit to be sent again while its payin's workflow has not started, never holding it as late", async () => {
    // The create answered PENDING and its workflow has not begun (recorded, not started).
    const { transactionId } = await insertPayinTransaction(env.database.db, credentials);
    const early = await deposit(transactionId, '1', 'earlybird1');
    expect(early.statusCode).toBe(503);
    expect(early.json().message).toBe('Service Unavailable.');
    const kept = await env.database.db
      .select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, transactionId));
    expect(kept).toEqual([]);
  });

  it('takes a payin without an order_id, as the vendor SDK sends it', async () => {
    const created = await merchant.post('/api/v1/test/crypto/payin', payinRequest({ order_id: undefined }));
    expect(created.statusCode).toBe(200);
    const body = created.json();
    expect(body).toMatchObject({ status: 'REDIRECT', data: { order_id: null } });
    const status = await merchant.get(`/api/test/status/${body.data.transaction_id}`);
    expect(status.json()).toMatchObject({ status: 'REDIRECT', data: { order_id: null } });
  });

  it('keeps an 18-decimal ETH amount exact through the status endpoint', async () => {
    const created = await merchant.post(
      '/api/v1/test/crypto/payin',
      payinRequest({ amount: 10, crypto_currency: 'ETH', crypto_network: 'ETHEREUM' }),
    );
    expect(created.payload).toContain('"crypto_amount":0.003333333333333334');
    const id = created.json().data.transaction_id;
    const partial = '0.001234567890123456';
    await deposit(id, partial);
    const status = await merchant.get(`/api/test/status/${id}`);
    expect(status.payload).toContain(`"crypto_paid_amount":${partial}`);
    // The fiat amount as the create answer wrote it, not padded to the column's 18 decimals.
    expect(status.payload).toContain('"amount":10,');
    expect(status.payload).toContain('"crypto_amount":0.003333333333333334');
  });

  it.each([
    [
      { crypto_network: 'BITCOIN' },
      'crypto_network',
      'The crypto network must be one of ETHEREUM, TRON, BINANCE_SMART_CHAIN, POLYGON, SOLANA, AVALANCHE, OMNI for USDT.',
    ],
    [
      { crypto_network: undefined },
      'crypto_network',
      'The crypto network field is required for USDT: one of ETHEREUM, TRON, BINANCE_SMART_CHAIN, POLYGON, SOLANA, AVALANCHE, OMNI.',
    ],
    [{ crypto_currency: 'DOGE' }, 'crypto_currency', 'The selected crypto currency is not supported.'],
    [{ amount: '10.001' }, 'amount', 'The amount field must have at most 2 decimal places.'],
    [{ currency: 'GBP' }, 'currency', 'There is no GBP wallet to credit in test mode.'],
    [
      { amount: 5, crypto_network: 'ETHEREUM' },
      'amount',
      'The amount must be between 10 and 100000 USD for USDT on ETHEREUM.',
    ],
    [{ country: 'USA' }, 'country', 'The country field must be a valid ISO 3166-1 alpha-2 country code.'],
  ])('answers 422 for %j', async (overrides, field, message) => {
    const response = await merchant.post('/api/v1/test/crypto/payin', payinRequest(overrides));
    expect(response.statusCode).toBe(422);
    expect(response.json().errors[field]).toContain(message);
  });
});

describe('POST /api/v1/{mode}/crypto', () => {
  it('quotes an ONRAMP and completes it from the checkout page with a chain transaction hash', async () => {
    const created = await merchant.post(
      '/api/v1/test/crypto',
      rampRequest({ fiat_amount: 120, crypto_currency: 'BTC', crypto_network: 'BITCOIN' }),
    );
    const body = created.json();
    expect(body).toMatchObject({
      status: 'REDIRECT',
      data: {
        transaction_type: 'ONRAMP',
        fiat: 'USD',
        fiat_amount: 120,
        crypto: 'BTC',
        crypto_amount: 0.002,
        crypto_network: 'BITCOIN',
        rate: 60000,
      },
    });
    const path = `/api/v1/test/crypto/checkout/${body.data.transaction_id}`;
    const hosted = await openHostedPage(env.app, path);
    expect(hosted.page.body).toContain('120 USD');
    const paid = await hosted.submit({ decision: 'approve' });
    expect(paid.statusCode).toBe(303);
    expect(new URL(String(paid.headers.location)).searchParams.get('status')).toBe('SUCCESS');
    const status = (await merchant.get(`/api/test/status/${body.data.transaction_id}`)).json();
    expect(status.data.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('prices quotes from the configured rate source, not from the catalogue directly', async () => {
    const { buildApp } = await import('../../src/api/app');
    const app = await buildApp({
      config: env.config,
      db: env.database.db,
      temporal: env.client,
      log: (await import('pino')).default({ level: 'silent' }),
      rates: {
        cryptoUsd: async () => '50000',
        fiatUsd: async (currency) => (currency === 'USD' ? '1' : undefined),
      },
    });
    try {
      const client = merchantClient(app, credentials);
      const created = await client.post(
        '/api/v1/test/crypto',
        rampRequest({ fiat_amount: 100, crypto_currency: 'BTC', crypto_network: 'BITCOIN' }),
      );
      expect(created.json().data).toMatchObject({ rate: 50000, crypto_amount: 0.002 });
      const refused = await client.post('/api/v1/test/crypto', rampRequest({ fiat_currency: 'EUR' }));
      expect(refused.json().errors.fiat_currency).toEqual(['The selected fiat currency is not supported.']);
    } finally {
      await app.close();
    }
  });

  it('the checkout deposit form says what is wrong with an amount, next to the way back', async () => {
    const created = (await merchant.post('/api/v1/test/crypto/payin', payinRequest({ amount: 10 }))).json();
    const path = `/api/v1/test/crypto/checkout/${created.data.transaction_id}`;
    const hosted = await openHostedPage(env.app, path);
    const submit = (amount: string) => hosted.submit({ amount }, `${path}/deposit`);
    for (const [amount, message] of [
      ['abc', 'Enter an amount greater than 0, such as 12.5.'],
      ['0', 'Enter an amount greater than 0, such as 12.5.'],
      ['1.1234567', 'The amount field must have at most 6 decimal places.'],
    ] as const) {
      const answer = await submit(amount);
      expect(answer.statusCode).toBe(422);
      expect(answer.body).toContain(message);
      expect(answer.body).toContain(`href="${path}"`);
    }
    const status = (await merchant.get(`/api/test/status/${created.data.transaction_id}`)).json();
    expect(status.data.crypto_paid_amount).toBe(0);
  });

  it('refuses an ONRAMP to an address that cannot exist on an EVM network', async () => {
    const refused = await merchant.post(
      '/api/v1/test/crypto',
      rampRequest({ crypto_network: 'ETHEREUM', wallet_address: 'TXYZabc123456789wallet' }),
    );
    expect(refused.statusCode).toBe(422);
    expect(refused.json().message).toBe(
      'The wallet address must be an address on ETHEREUM: 0x and 40 hex digits.',
    );
    const taken = await merchant.post(
      '/api/v1/test/crypto',
      rampRequest({ crypto_network: 'ETHEREUM', wallet_address: `0x${'ab'.repeat(20)}` }),
    );
    expect(taken.statusCode, taken.payload).toBe(200);
  });

  it('takes an OFFRAMP of exactly the least crypto its limits allow', async () => {
    const created = await merchant.post(
      '/api/v1/test/crypto',
      rampRequest({
        transaction_type: 'OFFRAMP',
        fiat_amount: undefined,
        crypto_amount: 10,
        crypto_network: 'ETHEREUM',
      }),
    );
    expect(created.statusCode).toBe(200);
    expect(created.json()).toMatchObject({ status: 'REDIRECT', data: { crypto_amount: 10 } });
  });

  it('settles an OFFRAMP from two deposits and pays the fiat out', async () => {
    const created = await merchant.post(
      '/api/v1/test/crypto',
      rampRequest({
        transaction_type: 'OFFRAMP',
        fiat_amount: undefined,
        crypto_amount: '0.5',
        crypto_currency: 'ETH',
        crypto_network: 'ETHEREUM',
        fiat_currency: 'EUR',
      }),
    );
    const body = created.json();
    expect(body.data).toMatchObject({
      transaction_type: 'OFFRAMP',
      crypto_amount: 0.5,
      fiat: 'EUR',
      fiat_amount: 1388.88,
    });
    expect(body.data.deposit_address).toMatch(/^0x[0-9a-f]{40}$/);
    await deposit(body.data.transaction_id, '0.2');
    const done = await deposit(body.data.transaction_id, '0.3');
    expect(done.json()).toMatchObject({
      status: 'SUCCESS',
      data: { crypto_payment_status: 'FULLPAID', crypto_paid_amount: 0.5 },
    });
    expect(done.json().data.fiat_payout_reference).toMatch(/^sbxf_/);
  });

  it.each([
    [{ first_name: 'Jo' }, 'first_name', 'The first name field must be between 3 and 191 characters.'],
    [{ first_name: 'Jean-Luc' }, 'first_name', 'The first name field must be letters only.'],
    [
      { last_name: 'x'.repeat(192) },
      'last_name',
      'The last name field must be between 3 and 191 characters.',
    ],
    [
      { phone_number: '1234567' },
      'phone_number',
      'The phone number field must be 8 to 19 digits with an optional leading +.',
    ],
    [
      { phone_number: '+12345678901234567890' },
      'phone_number',
      'The phone number field must be between 1 and 20 characters.',
    ],
    [
      { transaction_type: 'SWAP' },
      'transaction_type',
      'The transaction type field must be ONRAMP or OFFRAMP.',
    ],
    [
      { fiat_currency: 'US' },
      'fiat_currency',
      'The fiat currency field must be a valid ISO 4217 currency code.',
    ],
    [{ fiat_currency: 'PLN' }, 'fiat_currency', 'The selected fiat currency is not supported.'],
    [{ country: 'USA' }, 'country', 'The country field must be a valid ISO 3166-1 alpha-2 country code.'],
    [{ payment_method: 'CASH' }, 'payment_method', 'The payment method field must be CARD, BANK or WALLET.'],
    [
      { fiat_amount: undefined },
      'fiat_amount',
      'The fiat amount field is required when transaction type is ONRAMP.',
    ],
    [
      { crypto_amount: 1 },
      'crypto_amount',
      'The crypto amount field is not allowed when transaction type is ONRAMP.',
    ],
    [
      { transaction_type: 'OFFRAMP' },
      'fiat_amount',
      'The fiat amount field is not allowed when transaction type is OFFRAMP.',
    ],
    [
      { transaction_type: 'OFFRAMP', fiat_amount: undefined },
      'crypto_amount',
      'The crypto amount field is required when transaction type is OFFRAMP.',
    ],
    [{ fiat_amount: '100.123' }, 'fiat_amount', 'The fiat amount field must have at most 2 decimal places.'],
    [
      { fiat_amount: 0.5, fiat_currency: 'EUR' },
      'fiat_amount',
      'The fiat amount must be between 1 and 100000 EUR for USDT on TRON.',
    ],
    // A crypto amount is held to the limits converted at the quoted rate, and told them in crypto.
    [
      { transaction_type: 'OFFRAMP', fiat_amount: undefined, crypto_amount: 9, crypto_network: 'ETHEREUM' },
      'crypto_amount',
      "The crypto amount must be between 10 and 100000 USDT on ETHEREUM (10 to 100000 USD at today's rate).",
    ],
    [
      { transaction_type: 'OFFRAMP', fiat_amount: undefined, crypto_amount: '1.1234567' },
      'crypto_amount',
      'The crypto amount field must have at most 6 decimal places.',
    ],
    [{ fiat_amount: -3 }, 'fiat_amount', 'The fiat amount field must be a positive number.'],
    [
      { wallet_address: 'short' },
      'wallet_address',
      'The wallet address field must be between 8 and 128 characters.',
    ],
    [{ email: 'nope' }, 'email', 'The email field must be a valid email address.'],
    [{ redirect_url: undefined }, 'redirect_url', 'The redirect url field is required.'],
  ])('answers 422 for %j', async (overrides, field, message) => {
    const response = await merchant.post('/api/v1/test/crypto', rampRequest(overrides));
    expect(response.statusCode).toBe(422);
    expect(response.json().errors[field]).toContain(message);
  });

  it.each([
    [{ first_name: 'Zoë', last_name: 'Ñandú' }],
    [{ first_name: 'Анна', last_name: '李小龙' }],
    [{ phone_number: '12345678' }],
    [{ phone_number: '+1234567890123456789' }],
    [{ first_name: 'A'.repeat(191) }],
    [{ payment_method: 'WALLET' }],
    [{ crypto_currency: 'BTC', crypto_network: undefined, fiat_amount: 50 }],
    [{ fiat_amount: '99.99' }],
  ])('accepts the edge values %j', async (overrides) => {
    const response = await merchant.post('/api/v1/test/crypto', rampRequest(overrides));
    expect(response.statusCode).toBe(200);
    expect(response.json().status).toBe('REDIRECT');
  });

  it('refuses deposits from another merchant and in live mode', async () => {
    const created = (await merchant.post('/api/v1/test/crypto/payin', payinRequest())).json();
    const other = merchantClient(env.app, await env.createMerchant());
    const theirs = await other.postPlain(`/api/v1/test/crypto/${created.data.transaction_id}/deposit`, {
      amount: 1,
    });
    expect(theirs.statusCode).toBe(404);
    const live = await merchant.postPlain(`/api/v1/live/crypto/${created.data.transaction_id}/deposit`, {
      amount: 1,
    });
    expect(live.statusCode).toBe(404);
  });
});
