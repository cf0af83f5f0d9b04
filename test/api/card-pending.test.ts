import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver } from '../helpers/webhook-receiver';
import { eq } from 'drizzle-orm';
import { cardVault } from '../../src/db/schema/index';
import { createActivities } from '../../activities/index';

let env: TestEnv;
let merchant: MerchantClient;

beforeAll(async () => {
  env = await startTestEnv({ FIRST_ANSWER_TIMEOUT_MS: '1500' });
  merchant = merchantClient(env.app, await env.createMerchant());
});
afterAll(() => env?.close());

describe('no worker answers in time', () => {
  it('answers PENDING with the data, then the status endpoint and the webhook carry the outcome', async () => {
    const receiver = await startWebhookReceiver();
    try {
      await env.stopWorker();
      const created = await merchant.post(
        '/api/v1/test/card',
        cardRequest({ webhook_url: receiver.url, order_id: 'late-1' }),
      );
      expect(created.statusCode).toBe(200);
      expect(created.json()).toMatchObject({
        status: 'PENDING',
        data: { order_id: 'late-1', amount: 1050, currency: 'USD', customer: { first_name: 'Jane' } },
      });
      const id = created.json().data.transaction_id;
      expect((await merchant.get(`/api/test/status/${id}`)).json().status).toBe('PENDING');

      await env.startWorker();
      const [webhook] = await receiver.waitFor(1);
      expect(webhook!.json).toMatchObject({ status: 'SUCCESS', data: { transaction_id: id } });
      expect((await merchant.get(`/api/test/status/${id}`)).json().status).toBe('SUCCESS');

      const replay = await merchant.post(
        '/api/v1/test/card',
        cardRequest({ webhook_url: receiver.url, order_id: 'late-1' }),
      );
      expect(replay.json()).toMatchObject({ status: 'SUCCESS', data: { transaction_id: id } });
    } finally {
      await env.startWorker();
      await receiver.close();
    }
  });
});

describe('a replay after the card was used', () => {
  it('never vaults the card number again', async () => {
    await env.stopWorker();
    try {
      const request = cardRequest({ order_id: 'revault-1' });
      const created = await merchant.post('/api/v1/test/card', request);
      expect(created.json().status).toBe('PENDING');
      const id = created.json().data.transaction_id;
      // The workflow's own step, run as the worker would, before it has projected anything.
      await createActivities({ db: env.database.db, config: env.config }).purgeCardData({
        transactionId: id,
      });
      const replay = await merchant.post('/api/v1/test/card', request);
      expect(replay.json().data.transaction_id).toBe(id);
      const vault = await env.database.db.select().from(cardVault).where(eq(cardVault.transactionId, id));
      expect(vault.map((v) => [v.panEnc, v.cvvEnc])).toEqual([[null, null]]);
    } finally {
      await env.startWorker();
    }
  });
});

describe('bad input never causes a 500', () => {
  const shapes: unknown[] = [null, true, 12, -1, 1.5, 'x', '', [], ['a'], {}, { nested: 1 }, '9'.repeat(400)];
  const fields = [
    'first_name',
    'email',
    'amount',
    'currency',
    'card_number',
    'card_expiry_month',
    'country',
    'order_id',
    'terminal_id',
    'webhook_url',
  ];
  it('answers 4xx with a message for every wrong type in every field', async () => {
    for (const field of fields) {
      for (const value of shapes) {
        const response = await merchant.post('/api/v1/test/card', cardRequest({ [field]: value }));
        expect(response.statusCode, `${field}=${JSON.stringify(value)}`).toBeLessThan(500);
        expect(typeof response.json().message).toBe('string');
      }
    }
  });
});
