import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asc, eq } from 'drizzle-orm';
import { Client } from '@temporalio/client';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { runCliIn } from '../helpers/cli';
import { cardRequest, merchantClient, payoutRequest, type MerchantClient } from '../helpers/merchant-client';
import { freePort } from '../../src/dev/postgres';
import { ledgerEntries, opsActions, webhookEvents } from '../../src/db/schema/index';
import { dataConverter } from '../../src/temporal/client';
import { FAILING_WEBHOOK_PATH } from '../../src/sandbox/failing-webhook';

/**
 * Ops rehearse a stuck payment in the sandbox (docs/sandbox.md): a card whose outcome stays unknown, a
 * payout whose processor is down, a webhook endpoint that keeps failing, each until ops retry. Each shows
 * in `ops stuck` and is resolved by the documented action, from the CLI or by name as the Temporal UI
 * sends it; `ops stuck` is empty afterwards.
 */
let env: TestEnv;
let merchant: MerchantClient;
let ui: Client;
let baseUrl: string;

beforeAll(async () => {
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  env = await startTestEnv({ BASE_URL: baseUrl, FIRST_ANSWER_TIMEOUT_MS: '1000' });
  await env.app.listen({ host: '127.0.0.1', port });
  merchant = merchantClient(env.app, await env.createMerchant());
  ui = new Client({ connection: env.client.connection, dataConverter: dataConverter(env.config) });
});
afterAll(() => env?.close());

interface Stuck {
  transactionId: string;
  kind: string;
  status: string;
  waiting: string;
}

const cli = (...argv: string[]) => runCliIn(env, ...argv);
const stuck = async (): Promise<Stuck[]> => {
  const listed = await cli('ops', 'stuck', '--older-than', '0s', '--json');
  expect(listed.stderr).toBe('');
  return JSON.parse(listed.stdout) as Stuck[];
};
const stuckOne = (id: string) =>
  expect.poll(async () => (await stuck()).find((s) => s.transactionId === id), {
    timeout: 30_000,
    interval: 250,
  });
const settles = (id: string) =>
  expect.poll(async () => (await merchant.get(`/api/test/status/${id}`)).json().status, {
    timeout: 30_000,
    interval: 250,
  });
const trail = async (id: string) =>
  (
    await env.database.db
      .select()
      .from(opsActions)
      .where(eq(opsActions.transactionId, id))
      .orderBy(asc(opsActions.id))
  ).map((row) => [row.action, row.actor]);

/** How ops act: from the CLI, or by sending `retryNow` by name with data `{}`, as the Temporal UI does. */
type Way = 'cli' | 'ui';
const ways: Way[] = ['cli', 'ui'];
const actorOf = (way: Way) => (way === 'cli' ? 'rehearsal' : 'temporal-ui');

/**
 * Sends ops' retry the chosen way, to the workflow that waits (a webhook's own delivery workflow). Answers
 * what the retry answered: a transaction's status once the attempt it asked for has ended.
 */
async function retry(way: Way, id: string, workflowId = id): Promise<unknown> {
  if (way === 'cli') {
    const retried = await cli('ops', 'retry', id, '--actor', actorOf(way), '--json');
    expect(retried.code, retried.stderr).toBe(0);
    return (JSON.parse(retried.stdout) as { transaction: { status?: string } }).transaction.status;
  }
  const answer = await ui.workflow.getHandle(workflowId).executeUpdate('retryNow', { args: [{}] });
  return (answer as { status?: string }).status;
}

const testWallet = () =>
  merchant.credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
const ledgerOf = async (id: string) =>
  (await env.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.reference, id))).map((e) => [
    e.step,
    e.amount,
  ]);

describe('rehearsing a stuck payment in the sandbox', () => {
  it.each(ways)('card 4000000000000887: an outcome unknown until ops retry (%s)', async (way) => {
    const created = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ card_number: '4000000000000887' }),
    );
    const id = created.json().data.transaction_id as string;
    // In its backoff between questions (`retryNow` is refused while a question is under way).
    await stuckOne(id).toMatchObject({
      kind: 'card',
      status: 'PENDING',
      waiting: expect.stringMatching(/Outcome unknown .*next try at/),
    });

    // The answer, as the audit row's "after", is what the retried attempt came to.
    expect(await retry(way, id)).toBe('SUCCESS');
    await settles(id).toBe('SUCCESS');
    expect(await trail(id)).toEqual([['retryNow', actorOf(way)]]);
  });

  it.each(ways)('payout card 4000000000003287: a processor down until ops retry (%s)', async (way) => {
    const created = await merchant.post(
      '/api/v1/test/payout',
      payoutRequest(testWallet(), { card_number: '4000000000003287', amount: 400 }),
    );
    const id = created.json().data.transaction_id as string;
    await stuckOne(id).toMatchObject({
      kind: 'payout',
      waiting: expect.stringMatching(/No payout terminal took the payout/),
    });

    expect(await retry(way, id)).toBe('SUCCESS');
    await settles(id).toBe('SUCCESS');
    expect(await trail(id)).toEqual([['retryNow', actorOf(way)]]);
    expect(await ledgerOf(id)).toEqual([
      ['reserve', -400n],
      ['settle', 0n],
    ]);
  });

  it('payout card 4000000000003287: ended by ops fail, the reserve released', async () => {
    const created = await merchant.post(
      '/api/v1/test/payout',
      payoutRequest(testWallet(), { card_number: '4000000000003287', amount: 300 }),
    );
    const id = created.json().data.transaction_id as string;
    await stuckOne(id).toMatchObject({ kind: 'payout' });

    const failed = await cli('ops', 'fail', id, '--reason', 'processor down', '--actor', 'rehearsal');
    expect(failed.code, failed.stderr).toBe(0);
    await settles(id).toBe('FAILED');
    expect(await trail(id)).toEqual([['forceFail', 'rehearsal']]);
    expect(await ledgerOf(id)).toEqual([
      ['reserve', -300n],
      ['release', 300n],
    ]);
  });

  it.each(ways)('the sandbox webhook endpoint that fails until ops retry the delivery (%s)', async (way) => {
    const created = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ webhook_url: `${baseUrl}${FAILING_WEBHOOK_PATH}` }),
    );
    expect(created.json().status).toBe('SUCCESS');
    const id = created.json().data.transaction_id as string;
    await stuckOne(id).toMatchObject({
      kind: 'card',
      status: 'SUCCESS',
      waiting: expect.stringMatching(/^webhook evt_\w+ .*Attempt 1 failed \(HTTP 503\)/),
    });
    const delivery = /\((webhook-evt_\w+-\d+)\)/.exec(
      (await stuck()).find((s) => s.transactionId === id)!.waiting,
    )![1]!;

    await retry(way, id, delivery);
    await expect
      .poll(
        async () =>
          (await env.database.db.select().from(webhookEvents).where(eq(webhookEvents.transactionId, id)))[0]
            ?.status,
        { timeout: 30_000, interval: 250 },
      )
      .toBe('delivered');
    expect(await trail(id)).toEqual([['retryWebhook', actorOf(way)]]);
  });

  it('leaves nothing stuck once each was resolved', async () => {
    await expect.poll(() => stuck(), { timeout: 30_000, interval: 500 }).toEqual([]);
  });
});
