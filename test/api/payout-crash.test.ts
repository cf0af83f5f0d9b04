import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { merchantClient, payoutRequest, type MerchantClient } from '../helpers/merchant-client';
import { ledgerEntries, wallets } from '../../src/db/schema/index';
import { sandboxPayouts } from '../../activities/connectors/sandbox-payouts';
import type { PayoutProcessor } from '../../activities/connectors/types';
import type { MerchantCredentials } from '../../src/merchants/accounts';

let env: TestEnv;
let merchant: MerchantClient;
let credentials: MerchantCredentials;

/** The sandbox processor, except that the first send dies mid-call (the worker "crashes" there). */
let sandbox: PayoutProcessor;
let crashed: () => void;
const crash = new Promise<void>((resolve) => (crashed = resolve));
let sends = 0;
let paid = 0;
const flaky: PayoutProcessor = {
  async send(request) {
    sends += 1;
    if (sends === 1) {
      crashed();
      throw new Error('worker lost while sending');
    }
    const result = await sandbox.send(request);
    if (result.outcome === 'paid') paid += 1;
    return result;
  },
  confirm: (request) => sandbox.confirm(request),
  lookup: (request) => sandbox.lookup(request),
};

beforeAll(async () => {
  env = await startTestEnv({}, { payoutConnectors: { 'sandbox-payouts': flaky } });
  sandbox = sandboxPayouts(env.database.db);
  credentials = await env.createMerchant();
  merchant = merchantClient(env.app, credentials);
});
afterAll(() => env?.close());

describe('a worker that dies between reserve and send', () => {
  it('gives exactly one payout and one debit once a worker is back', async () => {
    const walletId = credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
    const pending = merchant.post(
      '/api/v1/test/payout',
      payoutRequest(walletId, { order_id: 'crash-1', amount: 700 }),
    );
    await crash;
    await env.stopWorker();
    await env.startWorker();
    const created = await pending;
    const id = created.json().data.transaction_id;

    const deadline = Date.now() + 30_000;
    let status = created.json().status;
    while (status !== 'SUCCESS' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await merchant.get(`/api/test/status/${id}`)).json().status;
    }
    expect(status).toBe('SUCCESS');
    expect(sends).toBe(2);
    expect(paid).toBe(1);
    const entries = await env.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.reference, id));
    expect(entries.map((e) => [e.step, e.amount]).sort()).toEqual([
      ['reserve', -700n],
      ['settle', 0n],
    ]);
    const [wallet] = await env.database.db.select().from(wallets).where(eq(wallets.id, walletId));
    expect(wallet!.available).toBe(1_000_000n - 700n);
  });
});
