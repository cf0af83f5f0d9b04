import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
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

describe('card checkout page in Chromium', () => {
  it.each([
    ['Approve', 'SUCCESS'],
    ['Decline', 'FAILED'],
  ])(
    '%s ends on the merchant redirect URL with the outcome, and a verified webhook',
    async (button, status) => {
      const receiver = await startWebhookReceiver();
      try {
        const created = await merchant.post(
          '/api/v1/test/card',
          cardRequest({
            card_number: '4111111111111111',
            redirect_url: shopUrl,
            webhook_url: receiver.url,
            order_id: `e2e-${button}`,
          }),
        );
        const { redirect_url: redirectUrl, data } = created.json();
        const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
        const violations: string[] = [];
        page.on('console', (message) => {
          if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
        });
        await page.goto(redirectUrl);
        await expect(page.getByRole('heading', { name: 'Confirm your payment' }).isVisible()).resolves.toBe(
          true,
        );
        await page.getByRole('button', { name: button }).click();
        await page.waitForURL((url) => url.toString().startsWith(shopUrl));

        const landed = new URL(page.url());
        expect(Object.fromEntries(landed.searchParams)).toEqual({
          transaction_id: data.transaction_id,
          order_id: `e2e-${button}`,
          status,
        });
        expect(violations).toEqual([]);
        await page.close();

        const [webhook] = await receiver.waitFor(1);
        expect(webhook!.json).toMatchObject({ status, data: { transaction_id: data.transaction_id } });
        expect(verifyWebhook(webhook!, merchant.credentials.webhook_secret)).toEqual({
          hash: true,
          signature: true,
        });
      } finally {
        await receiver.close();
      }
    },
  );

  it('works on a phone-sized screen without JavaScript and without horizontal scrolling', async () => {
    const created = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ card_number: '5555555555554444', redirect_url: shopUrl }),
    );
    const measure = await browser.newPage({ viewport: { width: 360, height: 640 } });
    await measure.goto(created.json().redirect_url);
    expect(await measure.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await measure.close();

    const page = await browser.newPage({ viewport: { width: 360, height: 640 }, javaScriptEnabled: false });
    await page.goto(created.json().redirect_url);
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL((url) => url.toString().startsWith(shopUrl));
    expect(new URL(page.url()).searchParams.get('status')).toBe('SUCCESS');
    await page.close();
  });
});
