import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import type { TestEnv } from '../helpers/env';
import { startServedEnv } from '../helpers/browser';
import { referenceDocument } from '../../src/api/document';

/**
 * The API reference at /docs in Chromium, as a merchant's developer reads it on a desktop and on a phone:
 * Swagger UI renders every operation of the document, nothing the Content-Security-Policy refuses,
 * nothing wider than the screen. `SCREENSHOT_DIR` keeps a screenshot of each for a person to look at.
 */
let env: TestEnv;
let browser: Browser;
let served: Awaited<ReturnType<typeof startServedEnv>>;

const WIDTHS: Record<string, BrowserContextOptions> = {
  desktop: { viewport: { width: 1280, height: 800 } },
  // A phone lays the page out at its own width only when the page asks to (the viewport tag).
  phone: { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true },
};

const openapi = await referenceDocument();
const operationCount = [openapi.paths, openapi.webhooks]
  .flatMap((group) => Object.values(group as Record<string, object>))
  .reduce((sum, methods) => sum + Object.keys(methods).length, 0);

beforeAll(async () => {
  served = await startServedEnv();
  ({ env, browser } = served);
});
afterAll(() => served?.close());

async function shot(page: Page, name: string): Promise<void> {
  const dir = process.env.SCREENSHOT_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

/** A page that records every console error, CSP refusal and uncaught exception. */
async function openDocs(
  options: BrowserContextOptions,
  hash = '',
): Promise<{ page: Page; problems: string[] }> {
  const page = await (await browser.newContext(options)).newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${env.config.baseUrl}/docs${hash}`);
  await page
    .locator('.opblock')
    .nth(operationCount - 1)
    .waitFor();
  return { page, problems };
}

describe('/docs in Chromium', () => {
  for (const [width, options] of Object.entries(WIDTHS)) {
    it(`renders every operation at ${width} width, nothing overflowing, nothing refused`, async () => {
      const { page, problems } = await openDocs(options);
      await expect(page.getByRole('heading', { name: /Payments API/ }).isVisible()).resolves.toBe(true);
      expect(await page.locator('.opblock').count()).toBe(operationCount);
      // Script text: the page's globals are not this file's.
      const scrollWidth = await page.evaluate<number>('document.documentElement.scrollWidth');
      const innerWidth = await page.evaluate<number>('window.innerWidth');
      expect(innerWidth).toBe(options.viewport!.width);
      expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
      await shot(page, `docs-${width}`);

      // An encrypted endpoint shows the fields that go inside its envelope.
      const card = page.locator('#operations-Card_payments-createCardPayment');
      await card.locator('.opblock-summary').click();
      const body = card.locator('.opblock-section-request-body');
      await body.getByRole('tab', { name: 'Schema' }).click();
      const schema = body.locator('.json-schema-2020-12').first();
      for (const field of ['payload', 'card_number', 'card_expiry_month', 'card_cvv', 'redirect_url'])
        await expect(schema.getByText(field, { exact: true }).isVisible(), field).resolves.toBe(true);
      expect(
        await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth'),
        'no overflow with the operation open',
      ).toBe(true);
      await card.scrollIntoViewIfNeeded();
      await shot(page, `docs-${width}-card`);
      expect(problems).toEqual([]);
      await page.context().close();
    });
  }

  it('opens the operation a deep link names', async () => {
    const { page, problems } = await openDocs(WIDTHS.desktop!, '#/Transactions/getTransactionStatus');
    const status = page.locator('#operations-Transactions-getTransactionStatus');
    await status.locator('.opblock-body').waitFor();
    await expect(status.getByText('Transaction not found.').first().isVisible()).resolves.toBe(true);
    expect(await page.locator('.opblock.is-open').count()).toBe(1);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
