import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { z } from 'zod';
import * as endpoints from '../../src/schemas/endpoints';
import { ErrorAnswer } from '../../src/schemas/answers';
import { ApiError } from '../../src/platform/errors';
import type { EdgeServices } from '../../src/api/services';
import type { Created } from '../../src/transactions/create';
import { buckets, EDGE_MERCHANTS, edgeApp, type Calls } from '../helpers/edge';
import { cardRequest, encryptForMerchant } from '../helpers/merchant-client';

/**
 * The HTTP edge on its own (issue tier "edge"): authentication, the envelope, validation, the answers'
 * shapes and the error contract, with the domain's services passed in. No Postgres, no Temporal: each
 * case runs in milliseconds and says exactly which service the edge called, and with what.
 */

const KEY = 'sk_test_edge';
const { envelopeKey } = EDGE_MERCHANTS.sk_test_edge;

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(services: Partial<EdgeServices> = {}): Promise<{ app: FastifyInstance; calls: Calls }> {
  const built = await edgeApp(services);
  app = built.app;
  return built;
}

const auth = (key = KEY) => ({ authorization: `Bearer ${key}` });
const sealed = (fields: unknown) => ({ payload: encryptForMerchant(fields, envelopeKey) });

/** A card payment request with `overrides`, sealed in the test merchant's envelope. */
const postCard = (app: FastifyInstance, overrides: Record<string, unknown> = {}) =>
  app.inject({
    method: 'POST',
    url: '/api/v1/test/card',
    headers: auth(),
    payload: sealed(cardRequest(overrides)),
  });

/** The body parses against the endpoint's declared answer. */
function expectAnswer(endpoint: { schema: { response?: { 200: z.ZodType } } }, body: unknown): void {
  const parsed = endpoint.schema.response![200].safeParse(body);
  expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
}

/** A refusal in the contract's shape, with the message a merchant reads. */
function expectRefusal(response: LightMyRequestResponse, status: number, message: string): void {
  expect(response.statusCode).toBe(status);
  const body = response.json();
  expect(ErrorAnswer.safeParse(body).success).toBe(true);
  expect(body.message).toBe(message);
}

const BIG = 12_345_678_901_234_567_891n;

/** A card payment as the domain answers it, with an amount above 2^64 that must stay exact. */
function cardCreated(replayed = false): Created {
  return {
    replayed,
    body: {
      status: 'REDIRECT',
      message: 'Redirect the customer to redirect_url to complete 3-D Secure.',
      redirect_url: 'https://payments.example/api/v1/test/card/checkout/txn_1',
      data: {
        amount: BIG,
        currency: 'USD',
        order_id: 'order-1',
        transaction_id: 'txn_1',
        customer: { first_name: 'Jane', last_name: 'Doe', email: 'jane@example.com' },
        refund: { status: false, refund_date: null },
        chargeback: { status: false, chargeback_date: null },
        descriptor: 'EDGE SHOP',
        is_card_WL: false,
      },
    },
  };
}

describe('the merchant API at its edge', () => {
  it('hands the card service the decrypted, validated request and writes its answer exactly', async () => {
    const { app, calls } = await start({ createCardPayment: async () => cardCreated() });
    const response = await postCard(app, { card_number: '4242 4242 4242 4242', order_id: 'order-1' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain(`"amount":${BIG}`);
    expect(response.headers['idempotent-replayed']).toBeUndefined();
    expectAnswer(endpoints.createCardPayment, response.json());
    const [[, merchant, input]] = calls.createCardPayment as [[unknown, unknown, Record<string, unknown>]];
    expect(merchant).toEqual({ merchantId: 'mer_edge', mode: 'test' });
    // What the schema makes of the body: the number without its spaces, the amount in minor units.
    expect(input).toMatchObject({ card_number: '4242424242424242', amount: 1050n, order_id: 'order-1' });
  });

  it('marks a replayed create', async () => {
    const { app } = await start({ createCardPayment: async () => cardCreated(true) });
    const response = await postCard(app, { order_id: 'order-1' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['idempotent-replayed']).toBe('true');
  });

  it('refuses what the schema refuses with every failing field, and calls no service', async () => {
    const { app, calls } = await start({ createCardPayment: async () => cardCreated() });
    const response = await postCard(app, { amount: 10.5, card_number: '4242424242424241', email: 'nope' });
    expect(response.statusCode).toBe(422);
    const body = response.json();
    expect(ErrorAnswer.safeParse(body).success).toBe(true);
    expect(Object.keys(body.errors).sort()).toEqual(['amount', 'card_number', 'email']);
    expect(body.message).toBe(Object.values(body.errors as Record<string, string[]>)[0]![0]);
    expect(calls.createCardPayment).toBeUndefined();
  });

  it('refuses a request without a key, with an unknown key, or with a key of the other mode', async () => {
    const { app, calls } = await start({ createCardPayment: async () => cardCreated() });
    const send = (headers: Record<string, string>, mode = 'test') =>
      app.inject({ method: 'POST', url: `/api/v1/${mode}/card`, headers, payload: sealed(cardRequest()) });
    expectRefusal(await send({}), 401, 'Authentication token is missing.');
    expectRefusal(await send(auth('sk_test_unknown')), 401, 'Invalid Secret Key.');
    expectRefusal(await send(auth(), 'live'), 401, 'Invalid Secret Key.');
    expect(calls.createCardPayment).toBeUndefined();
  });

  it('refuses a body sealed with another key, or not sealed', async () => {
    const { app, calls } = await start({ createCardPayment: async () => cardCreated() });
    const wrongKey = { payload: encryptForMerchant(cardRequest(), 'x'.repeat(32)) };
    const send = (payload: unknown) =>
      app.inject({ method: 'POST', url: '/api/v1/test/card', headers: auth(), payload: payload as object });
    expectRefusal(await send(wrongKey), 400, 'Encryption Key is invalid.');
    expectRefusal(await send(cardRequest()), 422, 'The payload field is required.');
    expect(calls.createCardPayment).toBeUndefined();
  });

  it('answers a domain refusal with its status and message, and a fault as 500 without its words', async () => {
    const { app } = await start({
      createCardPayment: async (_deps, _merchant, input) => {
        if (input.order_id === 'taken') throw new ApiError('ORDER_CONFLICT');
        throw new Error('connection to 10.0.0.5 refused: password for payments rejected');
      },
    });
    const send = (orderId: string) => postCard(app, { order_id: orderId });
    expectRefusal(await send('taken'), 409, 'The order id has already been taken.');
    const fault = await send('other');
    expectRefusal(fault, 500, 'Server Error.');
    expect(fault.body).not.toMatch(/10\.0\.0\.5|password/);
  });

  it('slows a key down once its tokens are spent, saying when to come back', async () => {
    const { app, calls } = await start({
      tokenBuckets: () => buckets(false),
      listWallets: async () => [],
    });
    const response = await app.inject({ method: 'GET', url: '/api/v1/wallet', headers: auth() });
    expectRefusal(response, 429, 'Too Many Attempts.');
    expect(response.headers['retry-after']).toBe('7');
    expect(calls.listWallets).toBeUndefined();
  });

  it('installs on every route what its declaration says: the key, and the envelope or plain JSON', async () => {
    // No route file names these hooks (src/api/app.ts installs them from src/schemas/endpoints).
    const { app, calls } = await start();
    const declared = Object.values(endpoints).filter(
      (e): e is (typeof endpoints)[keyof typeof endpoints] =>
        typeof e === 'object' && e !== null && 'config' in e && e.url !== '/metrics',
    );
    expect(declared.length).toBeGreaterThan(20);
    const url = (e: { url: string }) =>
      e.url.replace(':mode-', 'test-').replace(':mode', 'test').replace(/:\w+/g, 'PAx1');
    const checked = { keyed: 0, encrypted: 0, either: 0 };
    for (const e of declared) {
      const reference = e.config.reference as { open?: boolean; body?: string };
      const send = (headers: Record<string, string>, payload?: object) =>
        app.inject({ method: e.method, url: url(e), headers, ...(payload ? { payload } : {}) });
      const body = e.method === 'POST' ? {} : undefined;
      if (!reference.open) {
        expectRefusal(await send({}, body), 401, 'Authentication token is missing.');
        checked.keyed += 1;
      } else expect((await send({}, body)).statusCode, e.url).not.toBe(401);
      if (reference.body === 'encrypted') {
        // Plain JSON where the declaration says the envelope: refused before validation.
        expectRefusal(await send(auth(), { order_id: 'plain' }), 422, 'The payload field is required.');
        checked.encrypted += 1;
      }
      if (reference.body === 'either') {
        // Plain JSON taken as it is: refused by validation for its fields, never for a missing envelope.
        const answer = await send(auth(), { order_id: 'plain' });
        expect(answer.json().errors?.payload, e.url).toBeUndefined();
        checked.either += 1;
      }
    }
    expect(checked).toEqual({ keyed: 24, encrypted: 7, either: 4 });
    // Only the key and its rate limit were looked at: no request reached a domain service.
    const edge = ['findMerchantBySecretKey', 'tokenBuckets'];
    expect(Object.keys(calls).filter((name) => !edge.includes(name))).toEqual([]);
  });

  it('keeps the test-only endpoints out of live mode, and answers a wrong method with 405', async () => {
    const { app, calls } = await start({ requestAftercare: async () => cardCreated().body });
    const chargeback = await app.inject({
      method: 'POST',
      url: '/api/v1/live/chargeback',
      headers: auth('sk_live_edge'),
      payload: { transaction_id: 'txn_1' },
    });
    expect(chargeback.statusCode).toBe(404);
    expect(calls.requestAftercare).toBeUndefined();
    const wrongMethod = await app.inject({ method: 'GET', url: '/api/v1/test/card', headers: auth() });
    expectRefusal(wrongMethod, 405, 'The method is not allowed for this URL.');
  });

  it('shapes the wallets, the payout estimate and a redelivery as their answers declare', async () => {
    const { app } = await start({
      listWallets: async () =>
        [{ id: 'wal_1', currency: 'USD', available: 10_000_000_000_000_000_001n, status: 'Active' }] as never,
      estimatePayout: async () => ({ required: 1_100n, balance: 5_000n, fee: 100n }),
      redeliverMerchantEvent: async () =>
        ({
          event_id: 'evt_1',
          transaction_id: 'txn_1',
          event_type: 'status',
          status: 'SUCCESS',
          created_at: '2026-11-26T10:00:00.000Z',
          delivered: true,
          attempts: [],
        }) as never,
    });
    const wallets = await app.inject({ method: 'GET', url: '/api/v1/wallet', headers: auth() });
    expect(wallets.statusCode).toBe(200);
    expect(wallets.body).toContain('"amount":10000000000000000001');
    expectAnswer(endpoints.listWallets, wallets.json());

    const { card_cvv: _cvv, redirect_url: _url, ...card } = cardRequest({ card_number: '4222222222222222' });
    const estimate = await app.inject({
      method: 'POST',
      url: '/api/v1/wallet/estimate-payout',
      headers: auth(),
      payload: sealed({ wallet_id: 'wal_1', ...card }),
    });
    expect(estimate.statusCode).toBe(200);
    expect(estimate.json().data).toEqual({ amount_requried: 1100, wallet_balance: 5000, total_fee: 100 });
    expectAnswer(endpoints.estimatePayout, estimate.json());

    const redelivered = await app.inject({
      method: 'POST',
      url: '/api/v1/test/webhooks/events/evt_1/redeliver',
      headers: auth(),
    });
    expect(redelivered.statusCode).toBe(200);
    expectAnswer(endpoints.redeliverWebhookEvent, redelivered.json());
  });
});
