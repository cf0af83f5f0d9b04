import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { TestEnv } from '../helpers/env';
import { merchantClient, rampRequest, type MerchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver, verifyWebhook } from '../helpers/webhook-receiver';
import { startServedEnv, startShop } from '../helpers/browser';

let env: TestEnv;
let merchant: MerchantClient;
let browser: Browser;
let served: Awaited<ReturnType<typeof startServedEnv>>;
let shop: Awaited<ReturnType<typeof startShop>>;
let shopUrl: string;

beforeAll(async () => {
  served = await startServedEnv();
  ({ env, browser } = served);
  merchant = merchantClient(env.app, await env.createMerchant());
  shop = await startShop();
  shopUrl = shop.url;
});
afterAll(async () => {
  shop?.close();
  await served?.close();
});

describe('crypto checkout in Chromium', () => {
  it('ONRAMP: the customer pays, the crypto is sent, and they land back at the shop', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const created = await merchant.post(
        '/api/v1/test/crypto',
        rampRequest({ redirect_url: shopUrl, webhook_url: receiver.url, order_id: 'onramp-e2e' }),
      );
      const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
      await page.goto(created.json().redirect_url);
      expect(await page.getByText('100 USD', { exact: true }).isVisible()).toBe(true);
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.waitForURL((url) => url.toString().startsWith(shopUrl));
      expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({
        transaction_id: created.json().data.transaction_id,
        order_id: 'onramp-e2e',
        status: 'SUCCESS',
      });
      await page.close();
      const [webhook] = await receiver.waitFor(1);
      expect(webhook!.json).toMatchObject({ status: 'SUCCESS', data: { transaction_type: 'ONRAMP' } });
      expect(verifyWebhook(webhook!, merchant.credentials.webhook_secret)).toEqual({
        hash: true,
        signature: true,
      });
    } finally {
      await receiver.close();
    }
  });

  it('OFFRAMP: the page shows the deposit, takes two test deposits and sends the customer back', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const created = await merchant.post(
        '/api/v1/test/crypto',
        rampRequest({
          transaction_type: 'OFFRAMP',
          fiat_amount: undefined,
          crypto_amount: '50',
          redirect_url: shopUrl,
          webhook_url: receiver.url,
          order_id: 'offramp-e2e',
        }),
      );
      const { data, redirect_url: redirectUrl } = created.json();
      const page = await browser.newPage({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false });
      await page.goto(redirectUrl);
      expect(await page.getByText(data.deposit_address).isVisible()).toBe(true);
      await page.getByLabel('Test mode: deposit').fill('20');
      await page.getByRole('button', { name: 'Send test deposit' }).click();
      await page.waitForURL(redirectUrl);
      expect(await page.getByText('20 USDT').isVisible()).toBe(true);
      await page.getByLabel('Test mode: deposit').fill('30');
      await page.getByRole('button', { name: 'Send test deposit' }).click();
      await page.waitForURL((url) => url.toString().startsWith(shopUrl));
      expect(new URL(page.url()).searchParams.get('status')).toBe('SUCCESS');
      await page.close();
      const [webhook] = await receiver.waitFor(1);
      expect(webhook!.json).toMatchObject({
        status: 'SUCCESS',
        data: { transaction_type: 'OFFRAMP', crypto_payment_status: 'FULLPAID', crypto_paid_amount: 50 },
      });
      expect(verifyWebhook(webhook!, merchant.credentials.webhook_secret)).toEqual({
        hash: true,
        signature: true,
      });
    } finally {
      await receiver.close();
    }
  });
});
