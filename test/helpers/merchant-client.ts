import { createCipheriv, randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { MerchantCredentials } from '../../src/merchants/accounts';

/**
 * Encrypts exactly as the interface's section 4.1 tells merchants to, written apart from the service's
 * own envelope code: JSON text, fresh 16-byte IV, AES-256-CBC with the key's UTF-8 bytes, hex IV ':' hex.
 */
export function encryptForMerchant(
  fields: unknown,
  encryptionKey: string,
  iv: Buffer = randomBytes(16),
): string {
  const cipher = createCipheriv('aes-256-cbc', Buffer.from(encryptionKey, 'utf8'), iv);
  const text = typeof fields === 'string' ? fields : JSON.stringify(fields);
  return `${iv.toString('hex')}:${Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]).toString('hex')}`;
}

export interface MerchantClient {
  credentials: MerchantCredentials;
  key(mode: 'test' | 'live'): string;
  post(
    path: string,
    fields: unknown,
    options?: { mode?: 'test' | 'live'; key?: string; headers?: Record<string, string> },
  ): Promise<LightMyRequestResponse>;
  postPlain(path: string, body: unknown, options?: { key?: string }): Promise<LightMyRequestResponse>;
  get(path: string, options?: { key?: string }): Promise<LightMyRequestResponse>;
}

export function merchantClient(app: FastifyInstance, credentials: MerchantCredentials): MerchantClient {
  const key = (mode: 'test' | 'live') =>
    mode === 'test' ? credentials.test_secret_key : credentials.live_secret_key;
  const keyFor = (path: string) => (path.includes('/live/') ? key('live') : key('test'));
  return {
    credentials,
    key,
    post: (path, fields, options = {}) =>
      app.inject({
        method: 'POST',
        url: path,
        headers: {
          authorization: `Bearer ${options.key ?? keyFor(path)}`,
          'content-type': 'application/json',
          ...options.headers,
        },
        payload: JSON.stringify({ payload: encryptForMerchant(fields, credentials.encryption_key) }),
      }),
    postPlain: (path, body, options = {}) =>
      app.inject({
        method: 'POST',
        url: path,
        headers: {
          authorization: `Bearer ${options.key ?? keyFor(path)}`,
          'content-type': 'application/json',
        },
        payload: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    get: (path, options = {}) =>
      app.inject({
        method: 'GET',
        url: path,
        headers: { authorization: `Bearer ${options.key ?? keyFor(path)}` },
      }),
  };
}

/** A complete valid card payment request; override what a test is about. */
export function cardRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    first_name: 'Jane',
    last_name: 'Doe',
    email: 'jane@example.com',
    address: '1 Main Street',
    country: 'US',
    city: 'New York',
    state: 'NY',
    zip: '10001',
    ip_address: '203.0.113.7',
    phone_number: '+12025550123',
    amount: 1050,
    currency: 'USD',
    card_number: '4242424242424242',
    card_expiry_month: '12',
    card_expiry_year: String(new Date().getUTCFullYear() + 2),
    card_cvv: '123',
    redirect_url: 'https://merchant.example/return',
    ...overrides,
  };
}

/** A complete valid card payout request from the given wallet; override what a test is about. */
export function payoutRequest(
  walletId: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const {
    card_cvv: _cvv,
    redirect_url: _redirect,
    ...card
  } = cardRequest({ card_number: '4222222222222222', amount: 500 });
  return { wallet_id: walletId, ...card, ...overrides };
}

/** A complete valid crypto ramp request; override what a test is about. */
export function rampRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    first_name: 'Jane',
    last_name: 'Doe',
    phone_number: '+12025550123',
    transaction_type: 'ONRAMP',
    fiat_currency: 'USD',
    crypto_currency: 'USDT',
    crypto_network: 'TRON',
    fiat_amount: 100,
    wallet_address: 'TXYZabc123456789wallet',
    ip_address: '203.0.113.7',
    email: 'jane@example.com',
    country: 'US',
    redirect_url: 'https://merchant.example/return',
    ...overrides,
  };
}

/** A complete valid crypto payin request; override what a test is about. */
export function payinRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    first_name: 'Jane',
    last_name: 'Doe',
    email: 'jane@example.com',
    amount: 100,
    currency: 'USD',
    crypto_currency: 'USDT',
    crypto_network: 'TRON',
    ip_address: '203.0.113.7',
    phone_number: '+12025550123',
    address: '1 Main Street',
    country: 'US',
    order_id: `payin-${Math.random().toString(36).slice(2)}`,
    redirect_url: 'https://merchant.example/return',
    ...overrides,
  };
}
