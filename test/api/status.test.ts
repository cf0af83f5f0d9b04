import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import {
  cardRequest,
  merchantClient,
  payinRequest,
  payoutRequest,
  type MerchantClient,
} from '../helpers/merchant-client';
import { withoutCard } from '../helpers/hosted-pages';

let env: TestEnv;
let alice: MerchantClient;
let bob: MerchantClient;

beforeAll(async () => {
  env = await startTestEnv();
  alice = merchantClient(env.app, await env.createMerchant());
  bob = merchantClient(env.app, await env.createMerchant());
});
afterAll(() => env?.close());

describe('GET /api/{mode}/status/{id}', () => {
  it('finds a transaction by transaction id and by order id, right after create (API -> workflow -> Postgres)', async () => {
    const created = await alice.post('/api/v1/test/card', cardRequest({ order_id: 'status-1' }));
    expect(created.statusCode).toBe(200);
    const id = created.json().data.transaction_id;
    expect(id).toMatch(/^PA[A-Za-z0-9_-]{20,}$/);

    for (const key of [id, 'status-1']) {
      const response = await alice.get(`/api/test/status/${key}`);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        status: 'SUCCESS',
        message: 'Transaction processed successfully.',
        data: {
          amount: 1050,
          currency: 'USD',
          order_id: 'status-1',
          transaction_id: id,
          customer: { first_name: 'Jane', last_name: 'Doe', email: 'jane@example.com' },
          refund: { status: false, refund_date: null },
          chargeback: { status: false, chargeback_date: null },
          descriptor: 'SANDBOX*PRIMARY',
          is_card_WL: false,
        },
      });
    }
  });

  it('carries the fields the interface lists per kind: is_card_WL for APM, no chargeback for a crypto payin', async () => {
    const apm = await alice.post('/api/v1/test/apm', withoutCard(cardRequest()));
    const apmStatus = await alice.get(`/api/test/status/${apm.json().data.transaction_id}`);
    expect(Object.keys(apmStatus.json().data)).toEqual(
      expect.arrayContaining(['refund', 'chargeback', 'descriptor', 'is_card_WL']),
    );
    expect(apmStatus.json().data.is_card_WL).toBe(false);

    const payin = await alice.post('/api/v1/test/crypto/payin', payinRequest());
    const payinStatus = await alice.get(`/api/test/status/${payin.json().data.transaction_id}`);
    expect(payinStatus.json().data).toHaveProperty('refund');
    expect(payinStatus.json().data).toHaveProperty('crypto_payment_status');
    expect(payinStatus.json().data).not.toHaveProperty('chargeback');
  });

  it('answers 404 for an unknown id', async () => {
    const response = await alice.get('/api/test/status/PAunknownunknownunknown');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ message: 'Transaction not found.' });
  });

  it("never shows another merchant's transaction, by transaction id or order id", async () => {
    const created = await alice.post('/api/v1/test/card', cardRequest({ order_id: 'private-order' }));
    const id = created.json().data.transaction_id;
    for (const key of [id, 'private-order']) {
      const response = await bob.get(`/api/test/status/${key}`);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ message: 'Transaction not found.' });
    }
  });

  it('never shows a test transaction on the live path', async () => {
    const created = await alice.post('/api/v1/test/card', cardRequest({ order_id: 'test-only' }));
    const id = created.json().data.transaction_id;
    for (const key of [id, 'test-only']) {
      const response = await alice.get(`/api/live/status/${key}`);
      expect(response.statusCode).toBe(404);
    }
  });
});

describe('GET /api/v1/{mode}/payout/{id}/status', () => {
  it("answers a payout's status body by transaction id or order id, and 404 for anything else", async () => {
    // Its own merchant: the payout moves a wallet balance the wallet test below checks.
    const carol = merchantClient(env.app, await env.createMerchant());
    const walletId = carol.credentials.wallets.find(
      (w) => w.mode === 'test' && w.currency === 'USD',
    )!.wallet_id;
    const created = await carol.post(
      '/api/v1/test/payout',
      payoutRequest(walletId, { order_id: 'payout-status-1' }),
    );
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json().data.transaction_id;
    for (const key of [id, 'payout-status-1']) {
      const response = await carol.get(`/api/v1/test/payout/${key}/status`);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual((await carol.get(`/api/test/status/${id}`)).json());
      expect(response.json().data).toMatchObject({ transaction_id: id, wallet_id: walletId });
    }
    const card = await carol.post('/api/v1/test/card', cardRequest());
    for (const [client, key] of [
      [carol, card.json().data.transaction_id],
      [bob, id],
      [carol, 'no-such-payout'],
    ] as const) {
      const response = await client.get(`/api/v1/test/payout/${key}/status`);
      expect(response.statusCode).toBe(404);
      expect(response.json().message).toBe('Transaction not found.');
    }
  });
});

describe('GET /api/v1/wallet', () => {
  it("lists the calling mode's wallets with available balances", async () => {
    const response = await alice.get('/api/v1/wallet');
    expect(response.statusCode).toBe(200);
    const data = response.json().data;
    expect(data).toHaveLength(2);
    expect(data.map((w: { currency: string }) => w.currency)).toEqual(['EUR', 'USD']);
    for (const wallet of data) {
      expect(wallet).toMatchObject({ amount: 1_000_000, payment_method: 'CARD', status: 'Active' });
      expect(alice.credentials.wallets.find((w) => w.wallet_id === wallet.wallet_id)?.mode).toBe('test');
    }
    const live = await alice.get('/api/v1/wallet', { key: alice.key('live') });
    const liveIds = live.json().data.map((w: { wallet_id: string }) => w.wallet_id);
    expect(
      liveIds.every(
        (id: string) => alice.credentials.wallets.find((w) => w.wallet_id === id)?.mode === 'live',
      ),
    ).toBe(true);
  });
});

describe('health', () => {
  it('answers /readyz 503 naming what is down when Temporal cannot be reached', async () => {
    const { buildApp } = await import('../../src/api/app');
    const unreachable = {
      workflowService: { getSystemInfo: () => Promise.reject(new Error('unavailable')) },
    };
    const app = await buildApp({
      config: env.config,
      db: env.database.db,
      temporal: unreachable as unknown as typeof env.client,
      log: (await import('pino')).default({ level: 'silent' }),
    });
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({
      status: 'unavailable',
      postgres: 'ok',
      temporal: 'unavailable',
      chains: [],
    });
    await app.close();
  });

  it('finds a transaction id before an order id that happens to equal it', async () => {
    const first = await alice.post('/api/v1/test/card', cardRequest({ order_id: 'collide-a' }));
    const firstId = first.json().data.transaction_id;
    await alice.post('/api/v1/test/card', cardRequest({ order_id: firstId }));
    const found = await alice.get(`/api/test/status/${firstId}`);
    expect(found.json().data).toMatchObject({ transaction_id: firstId, order_id: 'collide-a' });
  });

  it('answers /healthz and /readyz', async () => {
    expect((await env.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    const ready = await env.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ok', postgres: 'ok', temporal: 'ok', chains: [] });
  });
});
