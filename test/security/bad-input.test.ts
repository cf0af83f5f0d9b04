import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { buildApp } from '../../src/api/app';
import { createDatabase } from '../../src/db/client';
import { freePort } from '../../src/dev/postgres';
import {
  cardRequest,
  merchantClient,
  payinRequest,
  payoutRequest,
  rampRequest,
  type MerchantClient,
} from '../helpers/merchant-client';

let env: TestEnv;
let merchant: MerchantClient;
let walletId: string;

beforeAll(async () => {
  env = await startTestEnv();
  const credentials = await env.createMerchant({ wallets: [{ currency: 'USD', amount: 1_000_000n }] });
  merchant = merchantClient(env.app, credentials);
  const wallets = (await merchant.get('/api/v1/wallet')).json() as { data: { wallet_id: string }[] };
  walletId = wallets.data[0]!.wallet_id;
});
afterAll(() => env?.close());

const rowCount = async () =>
  Number((await env.database.pool.query('select count(*)::int as n from transactions')).rows[0].n);

const requests = {
  card: () => ['/api/v1/test/card', cardRequest()] as const,
  payout: () => ['/api/v1/test/payout', payoutRequest(walletId)] as const,
  ramp: () => ['/api/v1/test/crypto', rampRequest()] as const,
  payin: () => ['/api/v1/test/crypto/payin', payinRequest()] as const,
};

const textFields: Record<keyof typeof requests, string[]> = {
  card: ['first_name', 'last_name', 'address', 'city', 'state', 'zip', 'order_id', 'email'],
  payout: ['first_name', 'last_name', 'wallet_id', 'address', 'city', 'state', 'zip'],
  ramp: ['first_name', 'last_name', 'crypto_currency', 'crypto_network', 'wallet_address'],
  payin: ['first_name', 'last_name', 'address', 'crypto_currency'],
};

describe('text fields refuse control characters and invalid UTF-16 (422, nothing written)', () => {
  const cases = Object.entries(textFields).flatMap(([kind, fields]) =>
    fields.flatMap((field) =>
      [
        ['NUL', 'ab\u0000cd'],
        ['a lone high surrogate', '\uD800x'],
        ['a lone low surrogate', 'ab\uDC00'],
        ['an escape character', 'ab\u001bcd'],
        ['a C1 control', 'ab\u0085cd'],
      ].map(([what, value]) => [kind as keyof typeof requests, field, what!, value!] as const),
    ),
  );
  it.each(cases)('%s %s with %s', async (kind, field, _what, value) => {
    const before = await rowCount();
    const [path, body] = requests[kind]();
    const response = await merchant.post(path, { ...body, [field]: value });
    expect(response.statusCode, response.body).toBe(422);
    const answer = response.json() as { message: string; errors: Record<string, string[]> };
    expect(answer.errors[field]).toBeDefined();
    expect(answer.message).toMatch(/field/);
    expect(await rowCount()).toBe(before);
  });
});

describe('path parameters that cannot be ids are not found', () => {
  it.each([
    ['GET', '/api/test/status/%00'],
    ['GET', '/api/test/status/ab%00cd'],
    ['GET', '/api/test/status/%1B'],
    ['POST', '/api/v1/test/crypto/PA%00abc/deposit'],
    ['GET', '/api/v1/live/crypto/checkout/%00'],
    ['POST', '/api/v1/live/crypto/checkout/%00/deposit'],
    ['GET', '/api/v1/test/card/checkout/%00'],
    ['GET', '/api/v1/test/payout/verification/%00'],
  ])('%s %s', async (method, url) => {
    const response = await env.app.inject({
      method: method as 'GET' | 'POST',
      url,
      headers: { authorization: `Bearer ${merchant.key('test')}`, 'content-type': 'application/json' },
      ...(method === 'POST' ? { payload: '{}' } : {}),
    });
    expect(response.statusCode, response.body).toBe(404);
    expect(response.body).not.toContain('\u0000');
    if (response.headers['content-type']?.toString().startsWith('application/json')) {
      expect(Object.keys(response.json() as object)).toEqual(['message']);
    }
  });
});

describe('framework errors answer in the contract shape without echoing input', () => {
  const long = 'A'.repeat(5000);
  it.each([
    ['an over-long id', `/api/test/status/${long}`],
    ['an over-long mode', `/api/${long}/status/PA123`],
    ['malformed percent-encoding', '/api/test/status/%E0%A4%A'],
    ['a bare percent', '/api/test/status/%'],
    ['percent-encoded invalid UTF-8', '/api/test/status/%ED%A0%80'],
    ['an over-long checkout id', `/api/v1/test/card/checkout/${long}`],
  ])('%s', async (_what, url) => {
    const response = await env.app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${merchant.key('test')}` },
    });
    expect(response.statusCode).toBeGreaterThanOrEqual(400);
    expect(response.statusCode).toBeLessThan(500);
    const body = response.json() as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['message']);
    expect(body.message).toMatch(/^[A-Z][^]*\.$/);
    expect(response.body.length).toBeLessThan(200);
    expect(response.body).not.toContain('AAAA');
    expect(response.body).not.toMatch(/FST_/);
  });

  it('an order id of the longest allowed length can be looked up by path', async () => {
    const orderId = `o${'x'.repeat(190)}`;
    const created = await merchant.post('/api/v1/test/card', cardRequest({ order_id: orderId }));
    expect(created.statusCode, created.body).toBe(200);
    const found = await merchant.get(`/api/test/status/${orderId}`);
    expect(found.statusCode, found.body).toBe(200);
    expect(found.json()).toMatchObject({ data: { order_id: orderId } });
  });
});

describe('a dependency that cannot be reached', () => {
  it('answers 503 with Retry-After, not a 500', async () => {
    const nowhere = createDatabase(`postgres://payments:payments@127.0.0.1:${await freePort()}/payments`, 1);
    const app = await buildApp({ config: env.config, db: nowhere.db, temporal: env.client });
    try {
      const response = await app.inject({
        method: 'GET',
        url: '/api/test/status/PAanything',
        headers: { authorization: `Bearer ${merchant.key('test')}` },
      });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({ message: 'Service Unavailable.' });
      expect(response.headers['retry-after']).toBe('5');
    } finally {
      await app.close();
      await nowhere.close();
    }
  });
});
