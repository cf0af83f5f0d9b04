import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, payoutRequest, type MerchantClient } from '../helpers/merchant-client';
import { idempotencyKeys, ledgerEntries, transactions } from '../../src/db/schema/index';
import { pruneIdempotencyKeys } from '../../src/transactions/create';
import type { MerchantCredentials } from '../../src/merchants/accounts';
import { workflowIds } from '../../src/contracts';

let env: TestEnv;
let credentials: MerchantCredentials;
let merchant: MerchantClient;

beforeAll(async () => {
  env = await startTestEnv();
  credentials = await env.createMerchant();
  merchant = merchantClient(env.app, credentials);
});
afterAll(() => env?.close());

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });
const merchantRows = () =>
  env.database.db.select().from(transactions).where(eq(transactions.merchantId, credentials.merchant_id));

describe('Idempotency-Key on a create (docs/api.md)', () => {
  it('answers a repeat with the first transaction, starting nothing new; refuses the key with other fields', async () => {
    const key = `key-${Math.random()}`;
    // No order id: the key alone makes the create safe to retry.
    const fields = cardRequest({ card_number: '4242424242424242', order_id: undefined });
    const first = await merchant.post('/api/v1/test/card', fields, withKey(key));
    expect(first.statusCode, first.payload).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const id = first.json().data.transaction_id as string;
    const before = await merchantRows();
    const [row] = before.filter((r) => r.id === id);

    const again = await merchant.post('/api/v1/test/card', fields, withKey(key));
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toMatchObject({ status: 'SUCCESS', data: { transaction_id: id } });
    // One transaction, and its workflow's run is the one the first request started.
    expect((await merchantRows()).length).toBe(before.length);
    const described = await env.client.workflow.getHandle(workflowIds.transaction(id)).describe();
    expect(described.runId).toBe(row!.runId);

    const other = await merchant.post('/api/v1/test/card', { ...fields, amount: 999 }, withKey(key));
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({
      message: 'The Idempotency-Key has already been used for another request.',
    });
    expect((await merchantRows()).length).toBe(before.length);
    // Without the key, the same fields make a new payment.
    const fresh = await merchant.post('/api/v1/test/card', fields);
    expect(fresh.json().data.transaction_id).not.toBe(id);
  });

  it('keeps keys per mode, reserves a payout once, and names the transaction an order id already has', async () => {
    const key = `payout-${Math.random()}`;
    const walletId = credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
    const orderId = `order-${Math.random()}`;
    const fields = payoutRequest(walletId, { order_id: orderId, amount: 300 });
    const first = await merchant.post('/api/v1/test/payout', fields, withKey(key));
    expect(first.statusCode, first.payload).toBe(200);
    const id = first.json().data.transaction_id as string;
    expect(
      (await merchant.post('/api/v1/test/payout', fields, withKey(key))).json().data.transaction_id,
    ).toBe(id);
    // A new key on a repeat of the order: the order's transaction, and the key names it from now on.
    const otherKey = `${key}-2`;
    const byOrder = await merchant.post('/api/v1/test/payout', fields, withKey(otherKey));
    expect(byOrder.json().data.transaction_id).toBe(id);
    const [named] = await env.database.db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.merchantId, credentials.merchant_id), eq(idempotencyKeys.key, otherKey)));
    expect(named!.transactionId).toBe(id);
    const reserves = await env.database.db
      .select()
      .from(ledgerEntries)
      .where(and(eq(ledgerEntries.reference, id), eq(ledgerEntries.step, 'reserve')));
    expect(reserves).toHaveLength(1);
    // The same key in live mode is another key: its own create, refused or made on its own.
    const live = await merchant.post('/api/v1/live/card', cardRequest(), { ...withKey(key), mode: 'live' });
    expect(live.statusCode).not.toBe(409);
  });

  it('refuses a key that is not 1 to 255 visible characters, and forgets keys after a day', async () => {
    for (const bad of ['', 'has space', 'x'.repeat(256), 'ünïcode']) {
      const refused = await merchant.post('/api/v1/test/card', cardRequest(), withKey(bad));
      expect(refused.statusCode, bad).toBe(422);
      expect(refused.json().errors).toEqual({
        'Idempotency-Key': ['The Idempotency-Key header must be 1 to 255 visible ASCII characters.'],
      });
    }
    const key = `old-${Math.random()}`;
    const fields = cardRequest({ card_number: '4242424242424242', order_id: undefined });
    const first = await merchant.post('/api/v1/test/card', fields, withKey(key));
    await env.database.db
      .update(idempotencyKeys)
      .set({ createdAt: sql`now() - interval '25 hours'` })
      .where(eq(idempotencyKeys.key, key));
    expect(await pruneIdempotencyKeys(env.database.db)).toBeGreaterThanOrEqual(1);
    const later = await merchant.post('/api/v1/test/card', fields, withKey(key));
    expect(later.statusCode).toBe(200);
    expect(later.json().data.transaction_id).not.toBe(first.json().data.transaction_id);
  });
});
