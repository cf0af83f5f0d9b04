import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Browser, Page } from 'playwright-core';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { launchBrowser } from '../helpers/browser';
import { cardRequest, merchantClient, payoutRequest } from '../helpers/merchant-client';
import { opsActions } from '../../src/db/schema/index';
import { freePort } from '../../src/dev/postgres';
import { startTemporalDevServer, type LocalTemporal } from '../../src/dev/temporal';

/**
 * The Temporal UI as ops use it on `npm run dev`: the dev server's own UI, reading payloads through the
 * service's codec endpoint. It needs the Temporal CLI (the suite's `TEMPORAL_CLI_PATH`); a run against an
 * external server (`TEMPORAL_ADDRESS` only) has no UI of ours to drive.
 */
const cli = process.env.TEMPORAL_CLI_PATH;

let temporal: LocalTemporal;
let env: TestEnv;
let browser: Browser;
let scratch: string;

/** How long the UI gets to load and decode what it shows. */
const UI_WAIT = { timeout: 30_000, interval: 250 };
/** A directory to keep screenshots of each step in, for looking at the UI by eye. */
const SHOTS = process.env.UI_SCREENSHOTS;
const shot = async (page: Page, name: string) => {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
};

describe.skipIf(!cli)('the Temporal UI of the dev server', () => {
  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'payments-ui-'));
    const [port, uiPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    temporal = await startTemporalDevServer({
      binary: cli!,
      port,
      uiPort,
      dbFile: join(scratch, 'temporal.db'),
      codecEndpoint: `http://127.0.0.1:${apiPort}/codec`,
      uiActionsOff: true,
    });
    env = await startTestEnv({
      TEMPORAL_ADDRESS: temporal.address,
      CODEC_ALLOW_LOOPBACK: 'true',
      CODEC_CORS_ORIGINS: `http://127.0.0.1:${uiPort}`,
      BASE_URL: `http://127.0.0.1:${apiPort}`,
    });
    await env.app.listen({ host: '127.0.0.1', port: apiPort });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await env?.close();
    await temporal?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  /** The UI's "Send an Update" dialog, filled in as an operator would. */
  async function sendUpdate(page: Page, name: string, data: string) {
    await page.getByRole('button', { name: 'More Actions' }).click();
    await page.getByRole('menuitem', { name: 'Send an Update' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByTestId('update-select-button').click();
    await dialog.getByRole('option', { name }).click();
    await dialog.getByRole('textbox').last().fill(data);
    // The data editor takes its value when it loses focus.
    await dialog.getByText('Update ID (optional)').click();
    await shot(page, `update-dialog-${name}`);
    await dialog.getByRole('button', { name: 'Submit' }).click();
  }

  it('finds a card transaction and reads its decoded summary, details and where it waits', async () => {
    const merchant = merchantClient(env.app, await env.createMerchant());
    // A payout too, so the list holds more than the one we look for.
    const credentials = await env.createMerchant();
    const walletId = credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
    await merchantClient(env.app, credentials).post('/api/v1/test/payout', payoutRequest(walletId));
    const created = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ card_number: '4111111111111111', order_id: 'ui-order-1', amount: 1050 }),
    );
    expect(created.json().status).toBe('REDIRECT');
    const id = created.json().data.transaction_id as string;

    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${temporal.uiUrl}/namespaces/default/workflows`);
    await expect.poll(() => page.getByRole('link', { name: 'cardPayment' }).count(), UI_WAIT).toBe(1);
    await shot(page, 'list');
    // What ops never need on transactions is not offered (src/dev/ui-proxy.ts).
    expect(await page.getByText('Start Workflow', { exact: false }).count()).toBe(0);
    await page.getByRole('link', { name: id }).click();

    // Summaries and details are Markdown, rendered in frames of their own.
    const shown = async () => {
      const frames = await Promise.all(
        page.frames().map((frame) =>
          frame
            .locator('body')
            .innerText()
            .catch(() => ''),
        ),
      );
      return frames.join('\n');
    };
    await expect
      .poll(async () => {
        await page.getByText('User Metadata', { exact: true }).click();
        return shown();
      }, UI_WAIT)
      .toMatch(/Kind:\s*card/);
    await shot(page, 'user-metadata');
    const text = await shown();
    expect(text).toContain('Card payment · 10.50 USD · test');
    // The static details, rendered from their Markdown, decoded through the codec endpoint.
    expect(text).toMatch(/Kind:\s*card/);
    expect(text).toMatch(/Amount:\s*10\.50 USD/);
    expect(text).toMatch(/Order id:\s*ui-order-1/);
    // Where it waits now.
    expect(text).toMatch(/Waiting for the 3-D Secure answer until \d\d:\d\d UTC/);
    // And what ops can do about it.
    expect(text).toContain(
      'Ops: nothing to do: the customer has until the deadline; forceFail with a reason ends it now.',
    );
    // The activity and timer summaries that make the history read as a story.
    await page.getByTestId('history-tab').click();
    await expect.poll(shown, UI_WAIT).toMatch(/Authorize with ter_\w+ \(sandbox-acquirer\)/);
    await shot(page, 'event-history');
    // Nothing personal: not the card number, not the cardholder.
    for (const seen of [text, await shown()]) {
      expect(seen).not.toContain('4111111111111111');
      expect(seen).not.toContain('Jane');
    }
  });

  it('tells a declined, a waiting and a paid payment apart in the default list, at 1280 px', async () => {
    const merchant = merchantClient(env.app, await env.createMerchant());
    const ids: Record<string, string> = {};
    for (const [name, card_number, status] of [
      ['declined', '4000000000000002', 'FAILED'],
      ['waiting', '4111111111111111', 'REDIRECT'],
      ['paid', '4242424242424242', 'SUCCESS'],
    ] as const) {
      const created = await merchant.post('/api/v1/test/card', cardRequest({ card_number }));
      expect(created.json().status).toBe(status);
      ids[name] = created.json().data.transaction_id as string;
    }
    // A browser on its first visit, as a new operator's.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const query = encodeURIComponent(`WorkflowId IN ('${Object.values(ids).join("','")}')`);
    await page.goto(`${temporal.uiUrl}/namespaces/default/workflows?query=${query}`);
    const row = (id: string) => page.getByRole('row').filter({ hasText: id });
    await expect.poll(() => row(ids.paid!).count(), UI_WAIT).toBe(1);
    await expect
      .poll(() => page.getByRole('columnheader', { name: 'TransactionStatus' }).count(), UI_WAIT)
      .toBe(1);
    const shows = async (id: string, pattern: RegExp) => {
      await expect
        .poll(async () => {
          await page.reload();
          return row(id).innerText();
        }, UI_WAIT)
        .toMatch(pattern);
    };
    await shows(ids.declined!, /Completed\s+FAILED/i);
    await shows(ids.waiting!, /Running\s+REDIRECT/i);
    await shows(ids.paid!, /Completed\s+SUCCESS/i);
    await shot(page, 'list-at-1280');
    // Both statuses in view without scrolling sideways.
    const column = await page.getByRole('columnheader', { name: 'TransactionStatus' }).boundingBox();
    expect(column!.x + column!.width).toBeLessThanOrEqual(1280);
    await context.close();
  });

  it('force-fails a transaction from the update dialog, audited with the actor typed there', async () => {
    const merchant = merchantClient(env.app, await env.createMerchant());
    const created = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ card_number: '4111111111111111', order_id: 'ui-order-2' }),
    );
    const id = created.json().data.transaction_id as string;

    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${temporal.uiUrl}/namespaces/default/workflows/${id}`);

    // Nothing to retry while the cardholder has the 3-D Secure page: the validator says so, in the UI.
    await sendUpdate(page, 'retryNow', '{"actor": "ui-tester"}');
    await expect
      .poll(() => page.locator('body').innerText(), UI_WAIT)
      .toMatch(/Nothing to retry now: Waiting for the 3-D Secure answer until \d\d:\d\d UTC/);
    await shot(page, 'update-refused');
    await page.reload();

    // The customer's answer is not theirs to give: typed in the dialog, it is refused and moves nothing.
    await sendUpdate(page, 'hostedDecision', '"approve"');
    await expect.poll(() => page.locator('body').innerText(), UI_WAIT).toContain('Not an ops action.');
    await shot(page, 'internal-update-refused');
    expect((await merchant.get(`/api/test/status/${id}`)).json().status).toBe('REDIRECT');
    await page.reload();

    await sendUpdate(page, 'forceFail', '{"reason": "Customer called to cancel", "actor": "ui-tester"}');
    await expect
      .poll(async () => (await merchant.get(`/api/test/status/${id}`)).json().status, UI_WAIT)
      .toBe('FAILED');
    expect((await merchant.get(`/api/test/status/${id}`)).json().message).toBe('Customer called to cancel');
    const [action] = await env.database.db.select().from(opsActions).where(eq(opsActions.transactionId, id));
    expect(action).toMatchObject({
      action: 'forceFail',
      actor: 'ui-tester',
      reason: 'Customer called to cancel',
      statusBefore: 'REDIRECT',
      statusAfter: 'FAILED',
    });
  });

  it('keeps a saved view of what ended FAILED', async () => {
    const merchant = merchantClient(env.app, await env.createMerchant());
    const paid = await merchant.post('/api/v1/test/card', cardRequest({ order_id: 'ui-paid' }));
    const declined = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ card_number: '4000000000000002', order_id: 'ui-declined' }),
    );
    expect([paid.json().status, declined.json().status]).toEqual(['SUCCESS', 'FAILED']);
    const paidId = paid.json().data.transaction_id as string;
    const declinedId = declined.json().data.transaction_id as string;

    const page = await browser.newPage({ viewport: { width: 1900, height: 900 } });
    await page.goto(`${temporal.uiUrl}/namespaces/default/workflows`);
    // Both are Completed workflows: a decline is an answer, not a fault. The default column tells them apart.
    const rowOf = (id: string) => page.getByRole('row').filter({ has: page.getByRole('link', { name: id }) });
    await expect.poll(() => rowOf(declinedId).innerText(), UI_WAIT).toMatch(/completed[\s\S]*FAILED/i);
    expect(await rowOf(paidId).innerText()).toMatch(/completed[\s\S]*SUCCESS/i);

    // The saved view ops keep: what ended FAILED (README, "Operating").
    await page.getByTestId('toggle-manual-query').click();
    await page.getByTestId('workflow-manual-search-input').fill(`TransactionStatus = 'FAILED'`);
    await page.getByTestId('workflow-manual-search-button').click();
    // The list empties while it reloads: both are waited for, not read at one instant.
    await expect.poll(() => page.getByRole('link', { name: paidId }).count(), UI_WAIT).toBe(0);
    await expect.poll(() => page.getByRole('link', { name: declinedId }).count(), UI_WAIT).toBe(1);
    await page.getByRole('button', { name: 'Save as New' }).click();
    await page.getByTestId('workflow-save-view-modal-input').fill('Failed payments');
    await page.locator('dialog[open]').getByTestId('confirm-modal-button').click();
    await expect.poll(() => page.getByText('Failed payments').count(), UI_WAIT).toBeGreaterThan(0);
    await shot(page, 'list-failed-view');
  });
});
