import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver, verifyWebhook } from '../helpers/webhook-receiver';
import { webhookFor } from '../helpers/hosted-pages';

let env: TestEnv;
let merchant: MerchantClient;

beforeAll(async () => {
  env = await startTestEnv();
  merchant = merchantClient(env.app, await env.createMerchant());
});
afterAll(() => env?.close());

const endpoints: { method: 'GET' | 'POST'; url: (mode: string) => string }[] = [
  { method: 'POST', url: (m) => `/api/v1/${m}/crypto/currencies` },
  { method: 'POST', url: (m) => `/api/v1/${m}/card` },
  { method: 'POST', url: (m) => `/api/v1/${m}/payout` },
  { method: 'POST', url: (m) => `/api/v1/${m}/crypto` },
  { method: 'POST', url: (m) => `/api/v1/${m}/crypto/payin` },
  { method: 'POST', url: (m) => `/api/v1/${m}/crypto/PAnothing/deposit` },
  { method: 'GET', url: (m) => `/api/${m}/status/PAnothing` },
  { method: 'GET', url: () => `/api/v1/wallet` },
];

describe('bearer authentication on every merchant endpoint', () => {
  it.each(endpoints)('$method $url answers 401 without a token', async ({ method, url }) => {
    const response = await env.app.inject({
      method,
      url: url('test'),
      payload: method === 'POST' ? {} : undefined,
    });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ message: 'Authentication token is missing.' });
  });

  it.each(endpoints)('$method $url answers 401 for an unknown key', async ({ method, url }) => {
    const response = await env.app.inject({
      method,
      url: url('test'),
      headers: { authorization: 'Bearer PA_TEST_notARealKeyAtAllxxxxxxxxxxxxxxxxxxxx' },
      payload: method === 'POST' ? {} : undefined,
    });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ message: 'Invalid Secret Key.' });
  });

  it.each(endpoints.filter((e) => e.url('live').includes('/live/')))(
    '$method $url refuses a test key on the live path',
    async ({ method, url }) => {
      const response = await env.app.inject({
        method,
        url: url('live'),
        headers: { authorization: `Bearer ${merchant.key('test')}` },
        payload: method === 'POST' ? {} : undefined,
      });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ message: 'Invalid Secret Key.' });
    },
  );

  it('refuses a live key on a test path', async () => {
    const response = await merchant.post('/api/v1/test/card', cardRequest(), { key: merchant.key('live') });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ message: 'Invalid Secret Key.' });
  });

  it('treats a malformed Authorization header as a missing token', async () => {
    const response = await env.app.inject({
      method: 'GET',
      url: '/api/v1/wallet',
      headers: { authorization: 'Basic abc' },
    });
    expect(response.statusCode).toBe(401);
    expect(response.json().message).toBe('Authentication token is missing.');
  });

  it('answers 405 with Allow for a known URL asked with a method it does not take', async () => {
    const cases = [
      { method: 'DELETE', url: '/api/v1/test/card', allow: ['POST'] },
      { method: 'PUT', url: '/api/v1/wallet', allow: ['GET', 'HEAD'] },
      { method: 'PATCH', url: '/api/test/status/PAq3LZ0x9Vb2Nc7Rt5Yw1Ks8D', allow: ['GET', 'HEAD'] },
      // A method that takes a body, without one: the router refuses it before any route could.
      { method: 'QUERY', url: '/metrics', allow: ['GET', 'HEAD'] },
    ] as const;
    for (const { method, url, allow } of cases) {
      const response = await env.app.inject({ method: method as 'GET', url });
      expect(response.statusCode, `${method} ${url}`).toBe(405);
      expect(response.json()).toEqual({ message: 'The method is not allowed for this URL.' });
      expect(String(response.headers.allow).split(', ').sort()).toEqual([...allow]);
    }
    const unknown = await env.app.inject({ method: 'DELETE', url: '/api/v1/test/nothing-here' });
    expect(unknown.statusCode).toBe(404);
  });

  it('answers 404 Not Found for an unknown mode or route', async () => {
    for (const url of ['/api/v1/prod/card', '/api/v1/test/nothing-here']) {
      const response = await env.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${merchant.key('test')}` },
      });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ message: 'Not Found.' });
    }
  });

  it('keeps an old key working through the rotation overlap, and stops it after', async () => {
    const { rotateMerchantKeys } = await import('../../src/merchants/keys');
    const credentials = await env.createMerchant();
    const before = credentials.test_secret_key;
    const rotated = await rotateMerchantKeys(
      env.database.db,
      env.config.MASTER_KEY,
      credentials.merchant_id,
      1,
    );
    const wallet = (key: string) =>
      env.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: { authorization: `Bearer ${key}` } });
    expect((await wallet(before)).statusCode).toBe(200);
    expect((await wallet(rotated.test_secret_key)).statusCode).toBe(200);

    const again = await rotateMerchantKeys(
      env.database.db,
      env.config.MASTER_KEY,
      credentials.merchant_id,
      0,
    );
    // The auth cache holds answers for a few seconds; a new key is never cached as invalid.
    expect((await wallet(again.test_secret_key)).statusCode).toBe(200);
    const { sql } = await import('drizzle-orm');
    const expired = await env.database.db.execute(
      sql`select count(*)::int as n from secret_keys where merchant_id = ${credentials.merchant_id} and expires_at <= now()`,
    );
    expect((expired.rows[0] as { n: number }).n).toBe(4);

    // Another API process (no cached answers) refuses the retired keys and takes the newest.
    const { buildApp } = await import('../../src/api/app');
    const other = await buildApp({
      config: env.config,
      db: env.database.db,
      temporal: env.client,
      log: (await import('pino')).default({ level: 'silent' }),
    });
    try {
      const on = (key: string) =>
        other.inject({ method: 'GET', url: '/api/v1/wallet', headers: { authorization: `Bearer ${key}` } });
      expect((await on(before)).json()).toEqual({ message: 'Invalid Secret Key.' });
      expect((await on(rotated.test_secret_key)).statusCode).toBe(401);
      expect((await on(again.test_secret_key)).statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe('webhook signing through a key rotation', () => {
  it('signs with both secrets during the overlap, and after it, or with overlap 0, only with the new one', async () => {
    const { rotateMerchantKeys } = await import('../../src/merchants/keys');
    const receiver = await startWebhookReceiver();
    try {
      const credentials = await env.createMerchant();
      /** Pays by card with a webhook, and checks its webhook against each secret. */
      const paidWebhookVerifiesWith = async (client: MerchantClient, ...secrets: string[]) => {
        const paid = await client.post('/api/v1/test/card', cardRequest({ webhook_url: receiver.url }));
        const webhook = await webhookFor(receiver, paid.json().data.transaction_id as string);
        return secrets.map((secret) => verifyWebhook(webhook, secret));
      };
      const original = credentials.webhook_secret;

      // A rotation with an overlap: either secret verifies, the old one as before (hash and signature).
      const rotated = await rotateMerchantKeys(
        env.database.db,
        env.config.MASTER_KEY,
        credentials.merchant_id,
        1,
      );
      const during = merchantClient(env.app, {
        ...credentials,
        test_secret_key: rotated.test_secret_key,
        encryption_key: rotated.encryption_key,
      });
      const [oldDuring, newDuring] = await paidWebhookVerifiesWith(during, original, rotated.encryption_key);
      expect(oldDuring).toEqual({ hash: true, signature: true });
      expect(newDuring).toEqual({ hash: false, signature: true });

      // The overlap over: only the new secret verifies.
      await env.database.db.execute(
        sql`update webhook_secrets set expires_at = now() where merchant_id = ${credentials.merchant_id} and expires_at is not null`,
      );
      const [oldAfter, newAfter] = await paidWebhookVerifiesWith(during, original, rotated.encryption_key);
      expect(oldAfter).toEqual({ hash: false, signature: false });
      expect(newAfter).toEqual({ hash: true, signature: true });

      // A rotation with overlap 0 (a leaked key): the next webhook already verifies only with the new one.
      const again = await rotateMerchantKeys(
        env.database.db,
        env.config.MASTER_KEY,
        credentials.merchant_id,
        0,
      );
      const now = merchantClient(env.app, {
        ...credentials,
        test_secret_key: again.test_secret_key,
        encryption_key: again.encryption_key,
      });
      const [leaked, fresh] = await paidWebhookVerifiesWith(
        now,
        rotated.encryption_key,
        again.encryption_key,
      );
      expect(leaked).toEqual({ hash: false, signature: false });
      expect(fresh).toEqual({ hash: true, signature: true });
    } finally {
      await receiver.close();
    }
  });
});

describe('a webhook secret of its own', () => {
  it('signs with the old and the new secret through the overlap, then only the new; key rotations leave it', async () => {
    const { rotateMerchantKeys, rotateWebhookSecret } = await import('../../src/merchants/keys');
    const receiver = await startWebhookReceiver();
    try {
      const credentials = await env.createMerchant();
      const client = merchantClient(env.app, credentials);
      const verifiesWith = async (paying: MerchantClient, ...secrets: string[]) => {
        const paid = await paying.post('/api/v1/test/card', cardRequest({ webhook_url: receiver.url }));
        const webhook = await webhookFor(receiver, paid.json().data.transaction_id as string);
        return secrets.map((secret) => verifyWebhook(webhook, secret).signature);
      };
      const { webhook_secret: own } = await rotateWebhookSecret(
        env.database.db,
        env.config.MASTER_KEY,
        credentials.merchant_id,
        1,
      );
      expect(own).not.toBe(credentials.encryption_key);
      // The overlap: either verifies; the encryption key still works for requests, as before.
      expect(await verifiesWith(client, credentials.webhook_secret, own)).toEqual([true, true]);
      await env.database.db.execute(
        sql`update webhook_secrets set expires_at = now() where merchant_id = ${credentials.merchant_id} and expires_at is not null`,
      );
      // After it, only the secret of its own: the encryption key signs nothing any more.
      expect(await verifiesWith(client, credentials.encryption_key, own)).toEqual([false, true]);
      // New API keys leave it signing.
      const rotated = await rotateMerchantKeys(
        env.database.db,
        env.config.MASTER_KEY,
        credentials.merchant_id,
        0,
      );
      expect(rotated.webhook_secret).toBe(own);
      const renewed = merchantClient(env.app, {
        ...credentials,
        test_secret_key: rotated.test_secret_key,
        encryption_key: rotated.encryption_key,
      });
      expect(await verifiesWith(renewed, rotated.encryption_key, own)).toEqual([false, true]);
      // A leaked one replaced with overlap 0: the next webhook verifies only with its successor.
      const { webhook_secret: next } = await rotateWebhookSecret(
        env.database.db,
        env.config.MASTER_KEY,
        credentials.merchant_id,
        0,
      );
      expect(await verifiesWith(renewed, own, next)).toEqual([false, true]);
      const [audited] = (
        await env.database.db.execute<{ n: number }>(
          sql`select count(*)::int as n from audit_log where merchant_id = ${credentials.merchant_id} and action = 'merchant.webhook_secret_rotated'`,
        )
      ).rows;
      expect(audited!.n).toBe(2);
    } finally {
      await receiver.close();
    }
  });
});

describe('rate limiting', () => {
  it('answers 429 with Retry-After once a key spends its burst', async () => {
    const limited = await startTestEnv({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '3' });
    try {
      const client = merchantClient(limited.app, await limited.createMerchant());
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await client.get('/api/v1/wallet')).statusCode);
      expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
      const refused = await client.get('/api/v1/wallet');
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toEqual({ message: 'Too Many Attempts.' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const other = merchantClient(limited.app, await limited.createMerchant());
      expect((await other.get('/api/v1/wallet')).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('keeps no bucket for keys that match no merchant, and slows down a client that keeps trying them', async () => {
    const limited = await startTestEnv({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '5' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) {
        const answer = await limited.app.inject({
          url: '/api/v1/wallet',
          headers: { authorization: `Bearer PA_TEST_random${i}${Math.random().toString(36).slice(2)}` },
        });
        statuses.push(answer.statusCode);
      }
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(statuses.slice(-2)).toEqual([429, 429]);
      const rows = await limited.database.db.execute<{ n: number }>(
        sql`select count(*)::int as n from rate_limit_buckets`,
      );
      expect(rows.rows[0]!.n).toBe(0);
    } finally {
      await limited.close();
    }
  });
});
