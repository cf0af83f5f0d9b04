import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver } from '../helpers/webhook-receiver';
import { PaymentsClient, PaymentsError } from '../../src/client/index';
import { startServedEnv, startShop, typedClient } from '../helpers/browser';
import { cardDataScan } from '../helpers/card-scan';
import { webhookFor as webhookOf, withoutCard } from '../helpers/hosted-pages';

/**
 * The hosted payment page in Chromium, as a customer uses it: at desktop and phone widths, with the
 * keyboard only, without JavaScript. `SCREENSHOT_DIR` keeps a screenshot of each state for a person to
 * look at.
 */
let env: TestEnv;
let merchant: MerchantClient;
let browser: Browser;
let served: Awaited<ReturnType<typeof startServedEnv>>;
let shop: Awaited<ReturnType<typeof startShop>>;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let client: PaymentsClient;

const CVV = '6402';
const YEAR = String(new Date().getUTCFullYear() + 4);
const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 360, height: 740 } };

beforeAll(async () => {
  served = await startServedEnv();
  ({ env, browser } = served);
  merchant = merchantClient(env.app, await env.createMerchant({ name: 'Corner Books' }));
  // The typed client merchants use, over real HTTP.
  client = typedClient(env, merchant.credentials);
  shop = await startShop();
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  shop?.close();
  await receiver?.close();
  await served?.close();
});

async function hostedPayment(orderId: string): Promise<{ url: string; id: string }> {
  const request = withoutCard(
    cardRequest({ redirect_url: shop.url, webhook_url: receiver.url, order_id: orderId }),
  );
  const created = await client.hostedCard(request);
  expect(created.status).toBe('REDIRECT');
  return { url: created.redirect_url!, id: created.data.transaction_id };
}

async function shot(page: Page, name: string): Promise<void> {
  const dir = process.env.SCREENSHOT_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

async function fill(page: Page, number: string, month = '11', year = YEAR) {
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Expiry month (MM)').fill(month);
  await page.getByLabel('Expiry year (YYYY)').fill(year);
  await page.getByLabel('Security code (CVV)').fill(CVV);
}

const landedStatus = (page: Page) => new URL(page.url()).searchParams.get('status');

describe('hosted payment page in Chromium', () => {
  for (const [width, viewport] of Object.entries(WIDTHS)) {
    it(`pays without a challenge at ${width} width, nothing overflowing, labels visible`, async () => {
      const { url, id } = await hostedPayment(`hosted-${width}`);
      const page = await browser.newPage({ viewport });
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      await page.goto(url);
      await expect(page.getByRole('heading', { name: 'Pay Corner Books' }).isVisible()).resolves.toBe(true);
      for (const label of ['Card number', 'Expiry month (MM)', 'Expiry year (YYYY)', 'Security code (CVV)'])
        await expect(page.getByText(label, { exact: true }).isVisible()).resolves.toBe(true);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        viewport.width,
      );
      await shot(page, `hosted-card-${width}`);
      await fill(page, '4242424242424242');
      await page.getByRole('button', { name: /^Pay 10\.50 USD$/ }).click();
      await page.waitForURL((u) => u.toString().startsWith(shop.url));
      expect(landedStatus(page)).toBe('SUCCESS');
      expect(violations).toEqual([]);
      await page.close();

      const webhook = await webhookFor(id);
      expect(webhook.json).toMatchObject({ status: 'SUCCESS', data: { transaction_id: id } });
      expect(
        PaymentsClient.verifyWebhook(webhook.body, webhook.headers, merchant.credentials.webhook_secret),
      ).toEqual({ valid: true, signature: true, hash: true, fresh: true });
      expect(await client.status(id)).toMatchObject({
        status: 'SUCCESS',
        data: { amount: 1050, currency: 'USD' },
      });
    });
  }

  it('shows each refusal next to its field, at phone width', async () => {
    const { url } = await hostedPayment('hosted-errors');
    const page = await browser.newPage({ viewport: WIDTHS.phone });
    await page.goto(url);
    await fill(page, '4242424242424241', '13');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'Check the 2 highlighted fields below.',
    );
    const number = page.getByLabel('Card number');
    const error = page.locator('#card_number-error');
    await expect(error.textContent()).resolves.toBe('Card number must be a valid card number.');
    await expect(number.getAttribute('aria-describedby')).resolves.toBe('card_number-error');
    // The message sits right under its field.
    const [field, message] = [(await number.boundingBox())!, (await error.boundingBox())!];
    expect(message.y).toBeGreaterThanOrEqual(field.y + field.height - 1);
    expect(message.y - (field.y + field.height)).toBeLessThan(24);
    await expect(page.locator('#card_expiry_month-error').isVisible()).resolves.toBe(true);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
      WIDTHS.phone.width,
    );
    await shot(page, 'hosted-card-errors-phone');
    await page.close();
  });

  it('is usable with the keyboard only and without JavaScript, through a 3-D Secure challenge', async () => {
    const { url } = await hostedPayment('hosted-keyboard');
    const context = await browser.newContext({ viewport: WIDTHS.desktop, javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(url);
    // Tab order: the number, month, year, CVV, then the Pay button.
    await page.keyboard.press('Tab');
    await page.keyboard.type('4111111111111111');
    await page.keyboard.press('Tab');
    await page.keyboard.type('11');
    await page.keyboard.press('Tab');
    await page.keyboard.type(YEAR);
    await page.keyboard.press('Tab');
    await page.keyboard.type(CVV);
    await page.keyboard.press('Tab');
    await expect(page.evaluate<string>('document.activeElement.textContent')).resolves.toMatch(/^Pay/);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/card\/checkout\//);
    await expect(page.getByRole('heading', { name: 'Confirm your payment' }).isVisible()).resolves.toBe(true);
    await shot(page, 'hosted-card-3ds-desktop');
    // The approve button is the first control of the challenge page.
    await page.keyboard.press('Tab');
    await expect(page.evaluate<string>('document.activeElement.textContent')).resolves.toBe('Approve');
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => u.toString().startsWith(shop.url));
    expect(landedStatus(page)).toBe('SUCCESS');
    await context.close();
  });

  it('ends a declined card back at the merchant with FAILED', async () => {
    const { url, id } = await hostedPayment('hosted-declined');
    const page = await browser.newPage({ viewport: WIDTHS.phone });
    await page.goto(url);
    await fill(page, '4000000000000002');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.waitForURL((u) => u.toString().startsWith(shop.url));
    expect(landedStatus(page)).toBe('FAILED');
    await page.close();
    expect(await client.status(id)).toMatchObject({ status: 'FAILED', message: 'Card declined.' });
    // A refusal comes back as a PaymentsError with the contract's message and the failing fields.
    // @ts-expect-error -- the typed client does not compile a request without its required fields
    const refused = await client.hostedCard({ amount: 1050 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PaymentsError);
    expect((refused as PaymentsError).status).toBe(422);
    expect((refused as PaymentsError).errors.first_name).toBeDefined();
  });

  it('leaves no card number or CVV in any log line, table or decoded history', async () => {
    const scan = await cardDataScan(env);
    expect(scan.histories).toBeGreaterThan(0);
    for (const [where, text] of Object.entries(scan.places)) {
      for (const number of ['4242424242424242', '4111111111111111', '4000000000000002', '4242424242424241'])
        expect(text, `${number} in ${where}`).not.toContain(number);
      expect(text, `CVV in ${where}`).not.toMatch(new RegExp(`["':]${CVV}["]`));
    }
    expect(scan.vault).toMatchObject({ pans: 0, cvvs: 0, expiries: 0 });
  });
});

const webhookFor = (transactionId: string) => webhookOf(receiver, transactionId);
