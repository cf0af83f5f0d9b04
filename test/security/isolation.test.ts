/**
 * Who may see and do what: another merchant and the other mode see exactly what an unknown id gets;
 * rate limits hold across API processes; hosted pages cannot be framed or posted to across sites;
 * secrets at rest are useless without the master key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/dev/postgres';
import { ready, SERVICE_COMMAND, ServiceProcess, until } from '../faults/harness';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, payinRequest, type MerchantClient } from '../helpers/merchant-client';

let env: TestEnv;
let alice: MerchantClient;
let bob: MerchantClient;

beforeAll(async () => {
  env = await startTestEnv({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '8' });
  alice = merchantClient(env.app, await env.createMerchant());
  bob = merchantClient(env.app, await env.createMerchant());
});
afterAll(() => env?.close());

describe("another merchant and the other mode get exactly an unknown id's answer", () => {
  it('on status (by id and order id), hosted pages and their actions, and deposits', async () => {
    const card = await alice.post(
      '/api/v1/test/card',
      cardRequest({ card_number: '4111111111111111', order_id: 'alice-3ds' }),
    );
    expect(card.json().status).toBe('REDIRECT');
    const cardId = card.json().data.transaction_id as string;
    const payin = await alice.post('/api/v1/test/crypto/payin', payinRequest({ order_id: 'alice-payin' }));
    const payinId = payin.json().data.transaction_id as string;

    const unknownStatus = await alice.get('/api/test/status/PAunknownunknownunknown0');
    for (const [client, mode] of [
      [bob, 'test'],
      [alice, 'live'],
    ] as const) {
      for (const key of [cardId, 'alice-3ds', payinId, 'alice-payin']) {
        const seen = await client.get(`/api/${mode}/status/${key}`, { key: client.key(mode) });
        expect(seen.statusCode).toBe(unknownStatus.statusCode);
        expect(seen.body).toBe(unknownStatus.body);
      }
      const deposit = await client.postPlain(
        `/api/v1/${mode}/crypto/${payinId}/deposit`,
        { amount: '1' },
        { key: client.key(mode) },
      );
      const unknownDeposit = await client.postPlain(
        `/api/v1/${mode}/crypto/PAunknownunknownunknown0/deposit`,
        { amount: '1' },
        { key: client.key(mode) },
      );
      expect(deposit.statusCode).toBe(unknownDeposit.statusCode);
      expect(deposit.body).toBe(unknownDeposit.body);
    }

    // A test transaction's hosted page does not exist under /live/, and cannot be acted on there.
    const livePage = await env.app.inject({ method: 'GET', url: `/api/v1/live/card/checkout/${cardId}` });
    const unknownPage = await env.app.inject({
      method: 'GET',
      url: '/api/v1/live/card/checkout/PAunknownunknownunknown0',
    });
    expect(livePage.statusCode).toBe(404);
    expect(livePage.body).toBe(unknownPage.body);
    const liveAction = await env.app.inject({
      method: 'POST',
      url: `/api/v1/live/card/checkout/${cardId}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'decision=approve&csrf=x',
    });
    expect(liveAction.statusCode).toBe(404);
    expect((await alice.get(`/api/test/status/${cardId}`)).json().status).toBe('REDIRECT');
    expect((await alice.get(`/api/test/status/${payinId}`)).json().data.crypto_paid_amount ?? 0).toBe(0);
  });
});

describe('rate limits', () => {
  it('hold across two API processes drawing from the same key', async () => {
    // A second API process over the same database and Temporal: the bucket lives in Postgres.
    const port = await freePort();
    const second = new ServiceProcess('api', SERVICE_COMMAND, {
      ...process.env,
      ROLE: 'api',
      SHUTDOWN_DRAIN_SECONDS: '0',
      HOST: '127.0.0.1',
      PORT: String(port),
      BASE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: env.config.DATABASE_URL,
      MASTER_KEY: env.config.MASTER_KEY,
      PAYLOAD_KEYS: env.config.PAYLOAD_KEYS,
      TEMPORAL_ADDRESS: env.config.TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: env.config.TEMPORAL_TASK_QUEUE,
      ALLOW_SANDBOX_IN_LIVE: 'true',
      RATE_LIMIT_PER_SECOND: '1',
      RATE_LIMIT_BURST: '8',
      LOG_LEVEL: 'warn',
    });
    second.start();
    try {
      await until('the second API process', ready(`http://127.0.0.1:${port}`), 90_000, () => second.ended);
      const carol = await env.createMerchant();
      const first = merchantClient(env.app, carol);
      const answers: number[] = [];
      for (let i = 0; i < 16; i += 1) {
        const status =
          i % 2 === 0
            ? (await first.get('/api/test/status/PAunknownunknownunknown0')).statusCode
            : (
                await fetch(`http://127.0.0.1:${port}/api/test/status/PAunknownunknownunknown0`, {
                  headers: { authorization: `Bearer ${carol.test_secret_key}` },
                })
              ).status;
        answers.push(status);
      }
      const allowed = answers.filter((s) => s !== 429).length;
      // A burst of 8 plus what one token a second refills while the requests run; buckets kept in each
      // process would have allowed all 16.
      expect(allowed).toBeGreaterThanOrEqual(8);
      expect(allowed).toBeLessThanOrEqual(10);
      expect(answers.slice(-4)).toEqual([429, 429, 429, 429]);
    } finally {
      await second.stop();
    }
  });
});

describe('hosted pages', () => {
  it('cannot be framed, load nothing from elsewhere, and refuse a form posted without the CSRF cookie', async () => {
    const card = await alice.post(
      '/api/v1/test/card',
      cardRequest({ card_number: '4111111111111111', order_id: 'csp-1' }),
    );
    const id = card.json().data.transaction_id as string;
    const page = await env.app.inject({ method: 'GET', url: `/api/v1/test/card/checkout/${id}` });
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;

    // The token alone, without the cookie the page set (a cross-site form post): refused, nothing decided.
    const forged = await env.app.inject({
      method: 'POST',
      url: `/api/v1/test/card/checkout/${id}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ decision: 'approve', csrf }).toString(),
    });
    expect(forged.statusCode).toBe(403);
    expect((await alice.get(`/api/test/status/${id}`)).json().status).toBe('REDIRECT');
    const cookie = String(page.headers['set-cookie']);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
  });
});

describe('the acquirer return URL', () => {
  it('cannot answer a challenge that waits on our own page: it sends the visitor there', async () => {
    const card = await alice.post(
      '/api/v1/test/card',
      cardRequest({ card_number: '4111111111111111', order_id: 'return-1' }),
    );
    const id = card.json().data.transaction_id as string;
    const visit = await env.app.inject({ method: 'GET', url: `/api/v1/test/card/return/${id}` });
    expect(visit.statusCode).toBe(303);
    expect(visit.headers.location).toBe(`/api/v1/test/card/checkout/${id}`);
    expect((await alice.get(`/api/test/status/${id}`)).json().status).toBe('REDIRECT');
  });
});

describe('secrets at rest', () => {
  it('no secret key, encryption key or webhook secret is readable anywhere in the database', async () => {
    const merchant = await env.createMerchant();
    const { merchantWebhookSecrets } = await import('../../src/merchants/keys');
    const secrets = [
      ...(await merchantWebhookSecrets(env.database.db, env.config.MASTER_KEY, merchant.merchant_id)),
      merchant.test_secret_key,
      merchant.live_secret_key,
      merchant.encryption_key,
      Buffer.from(merchant.encryption_key, 'utf8').toString('hex'),
      Buffer.from(merchant.encryption_key, 'utf8').toString('base64'),
    ];
    const { rows: tables } = await env.database.pool.query<{ table_name: string }>(
      "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
    );
    let scanned = 0;
    for (const { table_name } of tables) {
      const { rows } = await env.database.pool.query(
        `select row_to_json(t)::text as row from "${table_name}" t`,
      );
      for (const { row } of rows as { row: string }[]) {
        scanned += 1;
        for (const secret of secrets)
          expect(row.includes(secret), `${table_name} holds a secret in clear`).toBe(false);
      }
    }
    expect(scanned).toBeGreaterThan(10);
  });
});
