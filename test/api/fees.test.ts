import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { runCliIn } from '../helpers/cli';
import { merchantClient, payoutRequest, type MerchantClient } from '../helpers/merchant-client';
import { ledgerEntries, wallets } from '../../src/db/schema/index';
import { setFee } from '../../src/merchants/fees';

let env: TestEnv;
let merchant: MerchantClient;
let walletId: string;

beforeAll(async () => {
  env = await startTestEnv();
  merchant = merchantClient(env.app, await env.createMerchant());
  walletId = merchant.credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
});
afterAll(() => env?.close());

const estimate = (fields: Record<string, unknown>, key?: string) =>
  merchant.post(
    '/api/v1/wallet/estimate-payout',
    { wallet_id: walletId, amount: 500, card_number: '4222222222222222', ...fields },
    key ? { key } : {},
  );

async function available(): Promise<bigint> {
  const [wallet] = await env.database.db.select().from(wallets).where(eq(wallets.id, walletId));
  return wallet!.available;
}

describe('payout fees', () => {
  it('estimates no fee without a schedule', async () => {
    const answer = await estimate({});
    expect(answer.statusCode).toBe(200);
    expect(answer.json().data).toEqual({
      amount_requried: 500,
      wallet_balance: Number(await available()),
      total_fee: 0,
    });
  });

  it('estimates, reserves and takes the fee the schedule sets with the CLI', async () => {
    const set = await runCliIn(
      env,
      'merchants',
      'fees',
      '--merchant',
      merchant.credentials.merchant_id,
      '--mode',
      'test',
      '--kind',
      'payout',
      '--currency',
      'USD',
      '--percent',
      '1.5',
      '--fixed',
      '30',
      '--json',
    );
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual([
      expect.objectContaining({ kind: 'payout', currency: 'USD', percent: '1.5000', fixedMinor: 30 }),
    ]);

    // 1.5 % of 500 is 7.5, rounded up to 8, plus 30.
    const answer = await estimate({});
    expect(answer.json().data).toMatchObject({ amount_requried: 538, total_fee: 38 });

    const before = await available();
    const paid = await merchant.post('/api/v1/test/payout', payoutRequest(walletId));
    expect(paid.json().status).toBe('SUCCESS');
    expect(await available()).toBe(before - 538n);
    const entries = await env.database.db
      .select()
      .from(ledgerEntries)
      .where(eq(ledgerEntries.reference, paid.json().data.transaction_id));
    expect(entries.find((e) => e.step === 'reserve')?.amount).toBe(-538n);
    // The card gets the amount, not the fee.
    expect(paid.json().data.amount).toBe(500);
  });

  it('gives the fee back with the amount when the payout fails', async () => {
    const before = await available();
    const declined = await merchant.post(
      '/api/v1/test/payout',
      payoutRequest(walletId, { card_number: '4333333333333333' }),
    );
    expect(declined.json().status).toBe('FAILED');
    expect(await available()).toBe(before);
  });

  it.each([
    [{ wallet_id: 'WAL_nope' }, 'wallet_id', 'The selected wallet id is invalid.'],
    [
      { card_number: '4111111111111112' },
      'card_number',
      'The card number field must be a valid card number.',
    ],
    [{ amount: 0 }, 'amount', "The amount field must be a positive integer in the currency's minor units."],
  ])('refuses %j with a clear message', async (fields, field, message) => {
    const answer = await estimate(fields);
    expect(answer.statusCode).toBe(422);
    expect(answer.json().errors[field]).toContain(message);
  });

  it('changes one part of a fee line with the CLI and keeps the other; names an unknown merchant', async () => {
    const line = ['--mode', 'test', '--kind', 'payout', '--currency', 'USD'];
    const id = merchant.credentials.merchant_id;
    const changed = await runCliIn(
      env,
      'merchants',
      'fees',
      '--merchant',
      id,
      ...line,
      '--percent',
      '2',
      '--json',
    );
    expect(changed.code, changed.stderr).toBe(0);
    expect(JSON.parse(changed.stdout)).toEqual([
      expect.objectContaining({ percent: '2.0000', fixedMinor: 30 }),
    ]);
    // 2 % of 500 is 10, plus the 30 kept.
    expect((await estimate({})).json().data).toMatchObject({ total_fee: 40 });
    const unknown = await runCliIn(
      env,
      'merchants',
      'fees',
      '--merchant',
      'mer_nope',
      ...line,
      '--fixed',
      '1',
    );
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('Merchant mer_nope not found.');
  });

  it('takes only the line of the payout, its mode and its wallet currency', async () => {
    const other = merchantClient(env.app, await env.createMerchant());
    const usd = other.credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
    const lines = [
      { mode: 'test', kind: 'payout', currency: 'EUR' },
      { mode: 'live', kind: 'payout', currency: 'USD' },
      { mode: 'test', kind: 'card', currency: 'USD' },
    ] as const;
    for (const line of lines)
      await setFee(env.database.db, {
        merchantId: other.credentials.merchant_id,
        ...line,
        percent: '10',
        fixedMinor: 100n,
      });
    const ask = () =>
      other.post('/api/v1/wallet/estimate-payout', {
        wallet_id: usd,
        amount: 500,
        card_number: '4222222222222222',
      });
    expect((await ask()).json().data).toMatchObject({ amount_requried: 500, total_fee: 0 });
    await setFee(env.database.db, {
      merchantId: other.credentials.merchant_id,
      mode: 'test',
      kind: 'payout',
      currency: 'USD',
      percent: '0',
      fixedMinor: 7n,
    });
    expect((await ask()).json().data).toMatchObject({ amount_requried: 507, total_fee: 7 });
  });

  it("does not estimate on another mode's wallet", async () => {
    const answer = await estimate({ card_number: '4242424242424242' }, merchant.key('live'));
    expect(answer.statusCode).toBe(422);
    expect(answer.json().errors.wallet_id).toContain('The selected wallet id is invalid.');
  });
});
