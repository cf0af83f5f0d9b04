import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestEnv } from '../helpers/env';
import { merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { startServedEnv, startShop, typedClient } from '../helpers/browser';
import { runCliIn } from '../helpers/cli';
import type { PaymentsClient } from '../../src/client/index';

/** A payment link in Chromium: paid once through its pages, refused the second time; an expired link. */
let env: TestEnv;
let merchant: MerchantClient;
let browser: Browser;
let served: Awaited<ReturnType<typeof startServedEnv>>;
let shop: Awaited<ReturnType<typeof startShop>>;
let templateId: string;
let client: PaymentsClient;

beforeAll(async () => {
  served = await startServedEnv();
  ({ env, browser } = served);
  merchant = merchantClient(env.app, await env.createMerchant());
  client = typedClient(env, merchant.credentials);
  shop = await startShop();
  const added = await runCliIn(
    env,
    ...['templates', 'add', '--merchant', merchant.credentials.merchant_id, '--mode', 'test'],
    ...['--name', 'Invoices', '--redirect-url', shop.url, '--json'],
  );
  templateId = JSON.parse(added.stdout).payment_template_id;
});
afterAll(async () => {
  shop?.close();
  await served?.close();
});

async function shot(page: Page, name: string): Promise<void> {
  const dir = process.env.SCREENSHOT_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

async function link(body: Record<string, unknown>): Promise<string> {
  const created = await client.paymentLink({ payment_template_id: templateId, ...body });
  expect(created.message).toBe('Payment link created successfully.');
  return created.data;
}

describe('payment links in Chromium', () => {
  it('is paid once at phone width, and refused the second time', async () => {
    const url = await link({ currency: 'USD', order_id: 'invoice-77' });
    const page = await browser.newPage({ viewport: { width: 360, height: 740 } });
    await page.goto(url);
    await shot(page, 'link-details-phone');
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    const fields: [string, string][] = [
      ['Amount (USD)', '42.00'],
      ['First name', 'Ana'],
      ['Last name', 'Lopez'],
      ['Email', 'ana@example.com'],
      ['Phone number (with country code)', '+34911234567'],
      ['Address', 'Calle Mayor 1'],
      ['City', 'Madrid'],
      ['State or region', 'Madrid'],
      ['Postal code', '28013'],
      ['Country (two letters, e.g. US)', 'ES'],
    ];
    // First with a mistyped email: the refusal sits under its field, worded by the label.
    for (const [label, value] of fields)
      await page.getByLabel(label, { exact: true }).fill(label === 'Email' ? 'ana@' : value);
    await page.getByRole('button', { name: 'Continue to card details' }).click();
    await expect(page.locator('#email-error').textContent()).resolves.toBe(
      'Email must be a valid email address.',
    );
    await shot(page, 'link-errors-phone');
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await page.getByLabel('Email', { exact: true }).fill('ana@example.com');
    await page.getByRole('button', { name: 'Continue to card details' }).click();
    await page.waitForURL(/\/hosted\/card\//);
    await expect(page.getByText('42.00 USD').first().isVisible()).resolves.toBe(true);
    await page.getByLabel('Card number').fill('4242424242424242');
    await page.getByLabel('Expiry month (MM)').fill('08');
    await page.getByLabel('Expiry year (YYYY)').fill(String(new Date().getUTCFullYear() + 1));
    await page.getByLabel('Security code (CVV)').fill('321');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.waitForURL((u) => u.toString().startsWith(shop.url));
    expect(new URL(page.url()).searchParams.get('status')).toBe('SUCCESS');
    expect(new URL(page.url()).searchParams.get('order_id')).toBe('invoice-77');

    await page.goto(url);
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'This payment link has already been used.',
    );
    await shot(page, 'link-used-phone');
    await page.close();
  });

  it('is filled with the keyboard only at desktop width', async () => {
    const url = await link({ amount: 1500, currency: 'EUR' });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(url);
    await shot(page, 'link-details-desktop');
    for (const value of [
      'Ana',
      'Lopez',
      'ana@example.com',
      '+34911234567',
      'Calle Mayor 1',
      'Madrid',
      'Madrid',
      '28013',
      'ES',
    ]) {
      await page.keyboard.press('Tab');
      await page.keyboard.type(value);
    }
    await page.keyboard.press('Tab');
    await expect(page.evaluate<string>('document.activeElement.textContent')).resolves.toBe(
      'Continue to card details',
    );
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/hosted\/card\//);
    await expect(page.getByText('15.00 EUR').first().isVisible()).resolves.toBe(true);
    await page.close();
  });

  it('says an expired link has expired', async () => {
    const url = await link({
      amount: 900,
      currency: 'USD',
      expiry_date: new Date(Date.now() + 1000).toISOString(),
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(url);
    await expect(page.getByRole('alert').textContent()).resolves.toBe('This payment link has expired.');
    await page.close();
  });
});
