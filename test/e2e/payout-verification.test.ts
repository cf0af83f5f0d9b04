import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { TestEnv } from '../helpers/env';
import { merchantClient, payoutRequest, type MerchantClient } from '../helpers/merchant-client';
import { startServedEnv } from '../helpers/browser';
import type { MerchantCredentials } from '../../src/merchants/accounts';

let env: TestEnv;
let credentials: MerchantCredentials;
let merchant: MerchantClient;
let browser: Browser;
let served: Awaited<ReturnType<typeof startServedEnv>>;

beforeAll(async () => {
  served = await startServedEnv();
  ({ env, browser } = served);
  credentials = await env.createMerchant();
  merchant = merchantClient(env.app, credentials);
});
afterAll(() => served?.close());

describe('payout verification page in Chromium', () => {
  it.each([
    ['Approve', 'SUCCESS'],
    ['Reject', 'FAILED'],
  ])('%s settles the payout as %s and shows it', async (button, status) => {
    const walletId = credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
    const created = await merchant.post(
      '/api/v1/test/payout',
      payoutRequest(walletId, { card_number: '4000000000003220' }),
    );
    expect(created.json().status).toBe('PENDING');
    const page = await browser.newPage({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false });
    await page.goto(created.json().redirect_url);
    await page.getByRole('button', { name: button }).click();
    await page.waitForLoadState();
    expect(await page.locator('.status').textContent()).toBe(status);
    await page.close();
    const lookup = await merchant.get(`/api/test/status/${created.json().data.transaction_id}`);
    expect(lookup.json().status).toBe(status);
  });
});
