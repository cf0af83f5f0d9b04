import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { startServedEnv, startShop, typedClient } from '../helpers/browser';
import type { PaymentsClient } from '../../src/client/index';
import { withoutCard } from '../helpers/hosted-pages';

/** The APM pages in Chromium: pick a method, approve or decline at the provider, land at the merchant. */
let env: TestEnv;
let merchant: MerchantClient;
let browser: Browser;
let served: Awaited<ReturnType<typeof startServedEnv>>;
let shop: Awaited<ReturnType<typeof startShop>>;
let client: PaymentsClient;

const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 360, height: 740 } };

beforeAll(async () => {
  served = await startServedEnv();
  ({ env, browser } = served);
  merchant = merchantClient(env.app, await env.createMerchant());
  client = typedClient(env, merchant.credentials);
  shop = await startShop();
});
afterAll(async () => {
  shop?.close();
  await served?.close();
});

async function apmPayment(orderId: string): Promise<string> {
  const request = withoutCard(cardRequest({ redirect_url: shop.url, order_id: orderId }));
  const created = await client.apm(request);
  expect(created.status).toBe('REDIRECT');
  return created.redirect_url!;
}

async function shot(page: Page, name: string): Promise<void> {
  const dir = process.env.SCREENSHOT_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

describe('APM pages in Chromium', () => {
  it.each([
    ['Bank transfer', 'Approve', 'SUCCESS', 'phone'],
    ['Wallet', 'Decline', 'FAILED', 'desktop'],
  ] as const)(
    '%s, %s at the provider: back at the merchant with %s (%s width)',
    async (method, button, status, width) => {
      const url = await apmPayment(`apm-${width}-${button.toLowerCase()}`);
      const viewport = WIDTHS[width];
      const page = await browser.newPage({ viewport, javaScriptEnabled: false });
      await page.goto(url);
      await expect(page.getByRole('heading', { name: 'Choose how to pay' }).isVisible()).resolves.toBe(true);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        viewport.width,
      );
      await shot(page, `apm-methods-${width}`);
      await page.getByRole('button', { name: new RegExp(`^${method}`) }).click();
      await page.waitForURL(/\/apm\/provider\//);
      await expect(page.getByRole('heading', { name: 'Approve the payment' }).isVisible()).resolves.toBe(
        true,
      );
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        viewport.width,
      );
      await shot(page, `apm-provider-${width}`);
      await page.getByRole('button', { name: button }).click();
      await page.waitForURL((u) => u.toString().startsWith(shop.url));
      expect(new URL(page.url()).searchParams.get('status')).toBe(status);
      await page.close();
    },
  );

  it('is usable with the keyboard only', async () => {
    const url = await apmPayment('apm-keyboard');
    const page = await browser.newPage({ viewport: WIDTHS.desktop });
    await page.goto(url);
    await page.keyboard.press('Tab');
    await expect(page.evaluate<string>('document.activeElement.value')).resolves.toBe('bank_redirect');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/apm\/provider\//);
    await page.keyboard.press('Tab');
    await expect(page.evaluate<string>('document.activeElement.textContent')).resolves.toBe('Approve');
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => u.toString().startsWith(shop.url));
    expect(new URL(page.url()).searchParams.get('status')).toBe('SUCCESS');
    await page.close();
  });
});
