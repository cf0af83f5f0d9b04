import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { merchantClient, payinRequest, type MerchantClient } from '../helpers/merchant-client';
import { ledgerEntries, wallets } from '../../src/db/schema/index';
import type { MerchantCredentials } from '../../src/merchants/accounts';

let env: TestEnv;
let merchant: MerchantClient;
let credentials: MerchantCredentials;
let calls = 0;
let crashed: () => void;
const crash = new Promise<void>((resolve) => (crashed = resolve));

beforeAll(async () => {
  env = await startTestEnv(
    {},
    {
      // The first credit reaches Postgres, then the worker is lost before it can report back.
      wrap: (real) => ({
        async creditFunds(input) {
          calls += 1;
          await real.creditFunds(input);
          if (calls === 1) {
            crashed();
            throw new Error('worker lost after the credit');
          }
        },
      }),
    },
  );
  credentials = await env.createMerchant();
  merchant = merchantClient(env.app, credentials);
});
afterAll(() => env?.close());

describe('a worker lost around the payin credit', () => {
  it('credits the merchant wallet exactly once', async () => {
    const walletId = credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
    const created = (await merchant.post('/api/v1/test/crypto/payin', payinRequest({ amount: 40 }))).json();
    const id = created.data.transaction_id;
    const paid = merchant.postPlain(`/api/v1/test/crypto/${id}/deposit`, { amount: 40 });
    await crash;
    await env.stopWorker();
    await env.startWorker();
    expect((await paid).json()).toMatchObject({
      status: 'SUCCESS',
      data: { crypto_payment_status: 'FULLPAID' },
    });
    expect(calls).toBe(2);
    const entries = await env.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.reference, id));
    expect(entries.map((e) => [e.step, e.amount])).toEqual([['credit', 4000n]]);
    const [wallet] = await env.database.db.select().from(wallets).where(eq(wallets.id, walletId));
    expect(wallet!.available).toBe(1_000_000n + 4000n);
  });
});
