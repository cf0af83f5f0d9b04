import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asc, eq } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { runCliIn } from '../helpers/cli';
import { cardRequest, merchantClient, payoutRequest, type MerchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver } from '../helpers/webhook-receiver';
import { ledgerEntries, opsActions, wallets } from '../../src/db/schema/index';
import { NotProcessedError } from '../../activities/connectors/errors';
import { sandboxPayouts } from '../../activities/connectors/sandbox-payouts';
import type { PayoutProcessor } from '../../activities/connectors/types';
import type { MerchantCredentials } from '../../src/merchants/accounts';
import { eventually } from '../helpers/eventually';

let env: TestEnv;

/** The sandbox payout processor, down (refusing every send without acting) while `down` is set. */
let down = true;
let sends = 0;
let sandbox: PayoutProcessor;
const outage: PayoutProcessor = {
  async send(request) {
    sends += 1;
    if (down) throw new NotProcessedError('processor unavailable (503)');
    return sandbox.send(request);
  },
  confirm: (request) => sandbox.confirm(request),
  lookup: (request) => sandbox.lookup(request),
};

beforeAll(async () => {
  env = await startTestEnv(
    // A failed webhook waits ten minutes for its next attempt: only `ops retry` brings it sooner.
    { FIRST_ANSWER_TIMEOUT_MS: '1000', WEBHOOK_RETRY_SCHEDULE_SECONDS: '600' },
    { payoutConnectors: { 'sandbox-payouts': outage } },
  );
  sandbox = sandboxPayouts(env.database.db);
});
afterAll(() => env?.close());

const cli = (...argv: string[]) => runCliIn(env, ...argv);

interface Stuck {
  transactionId: string;
  kind: string;
  status: string;
  waiting: string;
}

async function stuckOnes(...argv: string[]): Promise<Stuck[]> {
  const result = await cli('ops', 'stuck', '--json', ...argv);
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout) as Stuck[];
}

async function shown(id: string) {
  const result = await cli('ops', 'show', id, '--json');
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout);
}

async function newPayout(merchant: MerchantClient, credentials: MerchantCredentials, extra = {}) {
  const walletId = credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
  const created = await merchant.post(
    '/api/v1/test/payout',
    payoutRequest(walletId, { order_id: `ops-${Math.random()}`, amount: 700, ...extra }),
  );
  expect(created.json().status).toBe('PENDING');
  return { id: created.json().data.transaction_id as string, walletId };
}

describe('a payout stuck on a processor outage', () => {
  it('is found stuck, retried now, force-failed with its reserve released, webhooked and audited', async () => {
    down = true;
    const receiver = await startWebhookReceiver();
    receiver.answerWith(503);
    try {
      const credentials = await env.createMerchant();
      const merchant = merchantClient(env.app, credentials);
      const { id, walletId } = await newPayout(merchant, credentials, { webhook_url: receiver.url });

      // Every terminal refused: the workflow waits a minute before the next round, and says so.
      // Found stuck once the round has failed (before that, it says it is sending).
      const found = await eventually('the payout to show as stuck between rounds', async () =>
        (await stuckOnes('--older-than', '0s', '--kind', 'payout')).find(
          (s) => s.transactionId === id && s.waiting.startsWith('No payout terminal took'),
        ),
      );
      expect(found).toMatchObject({ kind: 'payout', status: 'PENDING' });
      expect(found.waiting).toMatch(
        /^No payout terminal took the payout \(round 1\); next try at \d\d:\d\d UTC$/,
      );
      // As a table, with the link that opens these transactions in the Temporal UI.
      const table = await cli('ops', 'stuck', '--older-than', '0s', '--kind', 'payout');
      const link = /In the Temporal UI: (\S+)/.exec(table.stdout)?.[1];
      expect(link).toMatch(/^http:\/\/ui\.test\/namespaces\/default\/workflows\?query=/);
      expect(new URL(link!).searchParams.get('query')).toMatch(new RegExp(`^WorkflowId IN \\(.*'${id}'`));
      expect(await stuckOnes('--older-than', '0s', '--kind', 'card')).not.toContainEqual(
        expect.objectContaining({ transactionId: id }),
      );
      expect((await stuckOnes('--older-than', '1h')).map((s) => s.transactionId)).not.toContain(id);

      // retry-now cuts the minute short: the processor is asked again at once (still down).
      const sendsBefore = sends;
      const retried = await cli('ops', 'retry', id, '--actor', 'alice', '--json');
      expect(retried.stderr).toBe('');
      expect(JSON.parse(retried.stdout).transaction.status).toBe('PENDING');
      await eventually('a second round of sends', async () =>
        (await shown(id)).workflow.state.detail.includes('(round 2)') ? true : undefined,
      );
      expect(sends).toBeGreaterThan(sendsBefore);

      const failed = await cli(
        'ops',
        'fail',
        id,
        '--reason',
        'Processor outage, paid by hand',
        '--actor',
        'bob',
      );
      expect(failed.stderr).toBe('');
      expect(JSON.parse(failed.stdout)).toMatchObject({
        status: 'FAILED',
        message: 'Processor outage, paid by hand',
      });
      expect((await merchant.get(`/api/test/status/${id}`)).json().status).toBe('FAILED');

      // The compensation ran: the reserve came back, and nothing else moved.
      const entries = await env.database.db
        .select()
        .from(ledgerEntries)
        .where(eq(ledgerEntries.reference, id));
      expect(entries.map((e) => [e.step, e.amount]).sort()).toEqual([
        ['release', 700n],
        ['reserve', -700n],
      ]);
      const [wallet] = await env.database.db.select().from(wallets).where(eq(wallets.id, walletId));
      expect(wallet!.available).toBe(1_000_000n);

      // The FAILED webhook went out; the endpoint is down, so it waits ten minutes for its next attempt.
      const [first] = await receiver.waitFor(1);
      expect(first!.json).toMatchObject({ status: 'FAILED', message: 'Processor outage, paid by hand' });
      const afterFirst = await eventually('the failed attempt to be recorded', async () => {
        const view = await shown(id);
        return view.webhooks[0]?.attempts.length === 1 ? view : undefined;
      });
      expect(afterFirst.webhooks[0]).toMatchObject({ status: 'pending' });
      expect(afterFirst.webhooks[0].attempts[0]).toMatchObject({ attempt: 1, http_status: 503 });

      // The transaction is final, so it refuses every action, with the reason.
      const again = await cli('ops', 'fail', id, '--reason', 'twice');
      expect(again.code).toBe(1);
      expect(again.stderr.trim()).toBe('error: Transaction is already final (FAILED).');

      // retry-now on a final transaction still cuts its webhook's wait; the endpoint is back.
      receiver.answerWith(200);
      const webhookRetry = await cli('ops', 'retry', id, '--actor', 'carol', '--json');
      expect(webhookRetry.stderr).toBe('');
      expect(JSON.parse(webhookRetry.stdout).webhooks_retried).toEqual([
        { event_id: first!.json.event_id, run: 0 },
      ]);
      const [, second] = await receiver.waitFor(2);
      expect(second!.body).toBe(first!.body);
      await eventually('the event to be delivered', async () =>
        (await shown(id)).webhooks[0].status === 'delivered' ? true : undefined,
      );

      // Who did what, when, why, and the status before and after.
      const trail = await env.database.db
        .select()
        .from(opsActions)
        .where(eq(opsActions.transactionId, id))
        .orderBy(asc(opsActions.id));
      expect(trail.map((a) => [a.action, a.actor, a.reason, a.statusBefore, a.statusAfter])).toEqual([
        ['retryNow', 'alice', null, 'PENDING', 'PENDING'],
        ['forceFail', 'bob', 'Processor outage, paid by hand', 'PENDING', 'FAILED'],
        ['retryWebhook', 'carol', null, 'FAILED', 'FAILED'],
      ]);
      const view = await shown(id);
      expect(view.audit.map((a: { action: string }) => a.action)).toEqual([
        'retryNow',
        'forceFail',
        'retryWebhook',
      ]);
      expect(view.projection).toMatchObject({ status: 'FAILED', kind: 'payout' });
    } finally {
      await receiver.close();
    }
  });

  it('pays out as soon as ops retry once the processor is back, without waiting out the backoff', async () => {
    down = true;
    const credentials = await env.createMerchant();
    const merchant = merchantClient(env.app, credentials);
    const { id } = await newPayout(merchant, credentials);
    await eventually('the payout to wait on its backoff', async () =>
      (await shown(id)).workflow.state?.waitingFor === 'retry' ? true : undefined,
    );

    down = false;
    const retried = await cli('ops', 'retry', id, '--json');
    expect(retried.stderr).toBe('');
    // It answers once the attempt it asked for has ended: paid.
    expect(JSON.parse(retried.stdout).transaction.status).toBe('SUCCESS');
    // The backoff is a minute; the payout is paid well within it.
    const status = await eventually('the payout to succeed', async () => {
      const body = (await merchant.get(`/api/test/status/${id}`)).json();
      return body.status === 'PENDING' ? undefined : body.status;
    });
    expect(status).toBe('SUCCESS');
    const [action] = await env.database.db.select().from(opsActions).where(eq(opsActions.transactionId, id));
    // Its "after" is what the retried attempt came to.
    expect(action).toMatchObject({ action: 'retryNow', statusBefore: 'PENDING', statusAfter: 'SUCCESS' });
    expect(action!.actor.length).toBeGreaterThan(0);

    const nothing = await cli('ops', 'retry', id);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr.trim()).toBe('error: Transaction is already final (SUCCESS).');
  });

  it('refuses a retry when nothing waits, and a force-fail without a reason', async () => {
    const merchant = merchantClient(env.app, await env.createMerchant());
    const created = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ card_number: '4111111111111111', order_id: `ops-${Math.random()}` }),
    );
    expect(created.json().status).toBe('REDIRECT');
    const id = created.json().data.transaction_id as string;

    // Waiting on the cardholder within the deadline is not stuck, and there is no backoff to cut.
    expect((await stuckOnes('--older-than', '0s')).map((s) => s.transactionId)).not.toContain(id);
    const retry = await cli('ops', 'retry', id);
    expect(retry.code).toBe(1);
    expect(retry.stderr.trim()).toMatch(
      /^error: Nothing to retry now: Waiting for the 3-D Secure answer until \d\d:\d\d UTC$/,
    );

    const noReason = await cli('ops', 'fail', id);
    expect(noReason.code).toBe(1);
    expect(noReason.stderr.trim()).toBe('error: --reason is required');
    const blank = await cli('ops', 'fail', id, '--reason', '   ');
    expect(blank.code).toBe(1);
    expect(blank.stderr.trim()).toBe('error: A reason of 1 to 500 characters is required.');
    for (const action of [['show'], ['retry'], ['fail', '--reason', 'x']]) {
      const unknown = await cli('ops', action[0]!, 'PAnothing', ...action.slice(1));
      expect(unknown.code).toBe(1);
      expect(unknown.stderr.trim()).toBe('error: Transaction PAnothing not found.');
    }
    const badAge = await cli('ops', 'stuck', '--older-than', 'soon');
    expect(badAge.code).toBe(1);
    expect(badAge.stderr).toContain('--older-than must be');

    // A card waiting on 3-D Secure can be failed: nothing was charged, nothing to undo.
    const failed = await cli('ops', 'fail', id, '--reason', 'Customer called to cancel', '--json');
    expect(failed.stderr).toBe('');
    expect(JSON.parse(failed.stdout)).toMatchObject({
      status: 'FAILED',
      message: 'Customer called to cancel',
    });
    expect((await merchant.get(`/api/test/status/${id}`)).json().status).toBe('FAILED');
  });

  it('takes an order id as the status endpoint does, and asks which merchant when two use it', async () => {
    const orderId = `ops-order-${Math.random()}`;
    const paid = [];
    for (const pan of ['4242424242424242', '4111111111111111']) {
      const credentials = await env.createMerchant();
      const created = await merchantClient(env.app, credentials).post(
        '/api/v1/test/card',
        cardRequest({ card_number: pan, order_id: orderId }),
      );
      paid.push({ id: created.json().data.transaction_id as string, merchant: credentials.merchant_id });
    }
    const [first, second] = paid as [(typeof paid)[0], (typeof paid)[0]];
    const ambiguous = await cli('ops', 'show', orderId);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr.trim()).toBe(
      `error: Order id ${orderId} names 2 transactions: ${paid
        .map((p) => `${p.id} (merchant ${p.merchant}, test)`)
        .sort()
        .join(', ')}. Give the transaction id, or --merchant MERCHANT_ID.`,
    );
    const one = await cli('ops', 'show', orderId, '--merchant', first.merchant, '--json');
    expect(one.stderr).toBe('');
    expect(JSON.parse(one.stdout).projection.data).toMatchObject({
      transaction_id: first.id,
      order_id: orderId,
    });
    // The second waits on 3-D Secure: failed by its order id.
    const failed = await cli(
      'ops',
      'fail',
      orderId,
      '--merchant',
      second.merchant,
      '--reason',
      'By order id',
    );
    expect(failed.stderr).toBe('');
    expect(JSON.parse(failed.stdout)).toMatchObject({ status: 'FAILED', message: 'By order id' });
  });

  it('says how to bring back a terminated transaction workflow, and acts on it once reset', async () => {
    const merchant = merchantClient(env.app, await env.createMerchant());
    const created = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ card_number: '4111111111111111', order_id: `ops-${Math.random()}` }),
    );
    const id = created.json().data.transaction_id as string;
    const handle = env.client.workflow.getHandle(id);
    // The first answer may come from the projection before the workflow task that made it has completed
    // (a busy machine): ops terminate a workflow that has run, so wait until it has.
    await expect
      .poll(
        async () => (await handle.fetchHistory()).events!.some((e) => e.workflowTaskCompletedEventAttributes),
        {
          timeout: 30_000,
          interval: 200,
        },
      )
      .toBe(true);
    await handle.terminate('operator mistake');

    const refused = await cli('ops', 'fail', id, '--reason', 'cleanup');
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(
      new RegExp(`^error: The workflow of ${id} is terminated while the transaction is REDIRECT: reset it`),
    );

    // What the message tells ops to do: reset to the last workflow task, then act again.
    const { events } = await handle.fetchHistory();
    const lastTask = events!.filter((e) => e.workflowTaskCompletedEventAttributes).at(-1)!;
    await env.client.workflowService.resetWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: id },
      workflowTaskFinishEventId: lastTask.eventId,
      reason: 'bring back after a terminate',
      requestId: `reset-${id}`,
    });
    const failed = await cli('ops', 'fail', id, '--reason', 'Cleanup after a terminate', '--json');
    expect(failed.stderr).toBe('');
    expect(JSON.parse(failed.stdout)).toMatchObject({
      status: 'FAILED',
      message: 'Cleanup after a terminate',
    });
    expect((await merchant.get(`/api/test/status/${id}`)).json().status).toBe('FAILED');
    // Final now, through a later run: no longer stuck, though the terminated run still says REDIRECT.
    expect((await stuckOnes('--older-than', '0s')).map((s) => s.transactionId)).not.toContain(id);
  });
});
