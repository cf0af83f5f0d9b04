import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { and, asc, eq } from 'drizzle-orm';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { insertCardTransaction } from '../helpers/fixtures';
import { webhookAttempts, webhookEvents } from '../../src/db/schema/index';
import { cardPayment } from '../../workflows/card-payment';
import { webhookDelivery, webhookRedelivery } from '../../workflows/webhook-delivery';
import { prepareRedelivery } from '../../src/transactions/webhook-events';
import { startWebhookRedeliveries } from '../../src/temporal/client';
import { workflowIds } from '../../src/contracts';
import { webhookSchedule } from '../../src/platform/config';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../activities/index';
import type { MerchantCredentials } from '../../src/merchants/accounts';

let ts: TimeSkippingEnv;
let merchant: MerchantCredentials;
let receiver: Server;
let answers: number[] = [];
let received = 0;

// A fresh test server per test: the Java server's time-skipping lock does not always recover between
// workflows that complete while no client awaits them.
beforeEach(async () => {
  ts = await startTimeSkipping();
  merchant = await ts.createMerchant();
});
afterEach(() => ts?.close());

beforeAll(async () => {
  receiver = createServer((request, response) => {
    request.resume();
    received += 1;
    response.statusCode = answers.shift() ?? 500;
    response.end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});
afterAll(() => {
  receiver?.close();
});

const receiverUrl = () => {
  const address = receiver.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`;
};

/**
 * A paid card transaction whose webhook's first attempt was made. With `withoutSkipping`, nothing awaits
 * a workflow's result meanwhile, so the test server skips no time: a delivery run started by the payment
 * keeps its retry timer until the test awaits something.
 */
async function paidTransactionWithWebhook({ withoutSkipping = false } = {}): Promise<string> {
  const input = await insertCardTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
    pan: '4242424242424242',
    webhookUrl: receiverUrl(),
  });
  const payment = await ts.env.client.workflow.start(cardPayment, {
    workflowId: input.transactionId,
    taskQueue: ts.taskQueue,
    args: [input],
  });
  if (withoutSkipping)
    await expect
      .poll(async () => (await payment.describe()).status.name, { timeout: 20_000 })
      .toBe('COMPLETED');
  else await payment.result();
  const [event] = await ts.database.db
    .select()
    .from(webhookEvents)
    .where(eq(webhookEvents.transactionId, input.transactionId));
  return event!.id;
}

async function eventOf(eventId: string) {
  const [event] = await ts.database.db.select().from(webhookEvents).where(eq(webhookEvents.id, eventId));
  return event!;
}

describe('webhook delivery workflow (time-skipping)', () => {
  it('retries on the whole schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then every 10 h) and gives up after 3 days', async () => {
    answers = [];
    received = 0;
    const eventId = await paidTransactionWithWebhook();
    const handle = ts.env.client.workflow.getHandle(workflowIds.webhook(eventId, 0));
    const started = Date.now();
    const outcome = await handle.result();
    expect(outcome).toBe('undelivered');
    expect(Date.now() - started).toBeLessThan(60_000);

    const history = await handle.fetchHistory();
    const timers = (history.events ?? [])
      .filter((e) => e.timerStartedEventAttributes)
      .map((e) => Number(e.timerStartedEventAttributes!.startToFireTimeout!.seconds));
    expect(timers).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000, 36000, 36000, 36000, 36000]);

    const attempts = await ts.database.db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.eventId, eventId))
      .orderBy(asc(webhookAttempts.attempt));
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(attempts.every((a) => a.httpStatus === 500 && a.error === 'HTTP 500' && a.latencyMs >= 0)).toBe(
      true,
    );
    expect(received).toBe(12);
    const [event] = await ts.database.db.select().from(webhookEvents).where(eq(webhookEvents.id, eventId));
    expect(event).toMatchObject({ status: 'undelivered', attempts: 12, deliveredAt: null });
  });

  it('stops at the first 2xx and records the event as delivered', async () => {
    answers = [503, 502, 204];
    received = 0;
    const eventId = await paidTransactionWithWebhook();
    const outcome = await ts.env.client.workflow.getHandle(workflowIds.webhook(eventId, 0)).result();
    expect(outcome).toBe('delivered');
    expect(received).toBe(3);
    const [event] = await ts.database.db.select().from(webhookEvents).where(eq(webhookEvents.id, eventId));
    expect(event).toMatchObject({ status: 'delivered', attempts: 3 });
  });

  it("makes the first attempt in the transaction's own workflow: no delivery workflow when it is taken", async () => {
    answers = [200];
    received = 0;
    const eventId = await paidTransactionWithWebhook();
    expect(received).toBe(1);
    const [event] = await ts.database.db.select().from(webhookEvents).where(eq(webhookEvents.id, eventId));
    expect(event).toMatchObject({ status: 'delivered', attempts: 1 });
    await expect(
      ts.env.client.workflow.getHandle(workflowIds.webhook(eventId, 0)).describe(),
    ).rejects.toThrow(/not found/i);
    const attempts = await ts.database.db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.eventId, eventId));
    expect(attempts.map((a) => [a.run, a.attempt, a.httpStatus])).toEqual([[0, 1, 200]]);
  });

  it('redelivers many events in one workflow: first attempts together, only a failed one retries on its own', async () => {
    answers = [200, 200, 200];
    const eventIds = [
      await paidTransactionWithWebhook(),
      await paidTransactionWithWebhook(),
      await paidTransactionWithWebhook(),
    ];
    await ts.database.db
      .update(webhookEvents)
      .set({ url: 'http://127.0.0.1:9/closed' })
      .where(eq(webhookEvents.id, eventIds[1]!));
    answers = [200, 200];
    received = 0;
    const runs = [];
    for (const id of eventIds)
      runs.push(...(await prepareRedelivery(ts.database.db, id, { delaysSeconds: [5], windowSeconds: 12 })));
    expect(runs.map((run) => run.run)).toEqual([1, 1, 1]);
    const outcome = await ts.env.client.workflow.execute(webhookRedelivery, {
      workflowId: `redelivery-${eventIds[0]}`,
      taskQueue: ts.taskQueue,
      args: [{ runs }],
    });
    expect(outcome).toEqual({ delivered: 2, retrying: 1 });
    expect(received).toBe(2);
    // The closed endpoint's event goes on in a delivery workflow of its own, from attempt 2.
    const retry = ts.env.client.workflow.getHandle(workflowIds.webhook(eventIds[1]!, 1));
    expect(await retry.result()).toBe('undelivered');
    for (const [index, id] of eventIds.entries()) {
      const attempts = await ts.database.db
        .select()
        .from(webhookAttempts)
        .where(and(eq(webhookAttempts.eventId, id), eq(webhookAttempts.run, 1)))
        .orderBy(asc(webhookAttempts.attempt));
      expect(attempts.map((a) => a.error)).toEqual(
        index === 1 ? ['connection failed', 'connection failed', 'connection failed'] : [null],
      );
      if (index !== 1)
        await expect(ts.env.client.workflow.getHandle(workflowIds.webhook(id, 1)).describe()).rejects.toThrow(
          /not found/i,
        );
    }
  });

  it('runs an overlapping redelivery of other events as a batch of its own: no event is dropped', async () => {
    answers = [200, 200];
    const [one, two] = [await paidTransactionWithWebhook(), await paidTransactionWithWebhook()];
    answers = [200, 200, 200];
    const schedule = { delaysSeconds: [5], windowSeconds: 12 };
    // Both asked for before either's attempts are recorded: the same run numbers.
    const merchants = await prepareRedelivery(ts.database.db, two, schedule);
    const cli = [
      ...(await prepareRedelivery(ts.database.db, two, schedule)),
      ...(await prepareRedelivery(ts.database.db, one, schedule)),
    ];
    await startWebhookRedeliveries(ts.env.client, ts.taskQueue, merchants);
    await startWebhookRedeliveries(ts.env.client, ts.taskQueue, cli);
    for (const runs of [merchants, cli])
      await ts.env.client.workflow.getHandle(workflowIds.webhookRedelivery(runs)).result();
    const attempted = await ts.database.db
      .select()
      .from(webhookAttempts)
      .where(and(eq(webhookAttempts.run, 1), eq(webhookAttempts.attempt, 1)));
    expect(new Set(attempted.map((a) => a.eventId))).toEqual(new Set([one, two]));
    const events = await ts.database.db.select().from(webhookEvents);
    expect(events.filter((e) => [one, two].includes(e.id)).map((e) => e.status)).toEqual([
      'delivered',
      'delivered',
    ]);
  });

  it("stops an older run's retries once a redelivery delivered the event, and never undoes a delivery", async () => {
    // Run 0 waits ten minutes before its second attempt, and no time is skipped until the test awaits run 0:
    // the redelivery comes first, whatever the load.
    await ts.close();
    ts = await startTimeSkipping({ WEBHOOK_RETRY_SCHEDULE_SECONDS: '600' });
    merchant = await ts.createMerchant();
    answers = [500, 200];
    received = 0;
    const eventId = await paidTransactionWithWebhook({ withoutSkipping: true });
    // Run 0 waits to retry; ops redeliver meanwhile (run 1), and the merchant takes it.
    const schedule = webhookSchedule(ts.config);
    const runs = await prepareRedelivery(ts.database.db, eventId, schedule);
    await startWebhookRedeliveries(ts.env.client, ts.taskQueue, runs);
    await expect.poll(async () => (await eventOf(eventId)).status, { timeout: 20_000 }).toBe('delivered');
    expect(received).toBe(2);
    // Run 0 retries no more: its next attempt finds the event delivered and sends nothing.
    expect(await ts.env.client.workflow.getHandle(workflowIds.webhook(eventId, 0)).result()).toBe(
      'delivered',
    );
    expect(received).toBe(2);
    expect(await eventOf(eventId)).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('gives an event up only for its latest run, and never once delivered', async () => {
    answers = [500];
    received = 0;
    const eventId = await paidTransactionWithWebhook();
    const { finishWebhookEvent } = createActivities({ db: ts.database.db, config: ts.config });
    const giveUp = (run: number) =>
      new MockActivityEnvironment().run(finishWebhookEvent, { eventId, status: 'undelivered' as const, run });
    // A redelivery began (run 1): run 0 giving up leaves the event to it.
    await prepareRedelivery(ts.database.db, eventId, webhookSchedule(ts.config));
    await giveUp(0);
    expect(await eventOf(eventId)).toMatchObject({ status: 'pending', run: 1 });
    await giveUp(1);
    expect(await eventOf(eventId)).toMatchObject({ status: 'undelivered', run: 1 });
    // Delivered by any run: no run takes it back.
    await new MockActivityEnvironment().run(finishWebhookEvent, {
      eventId,
      status: 'delivered' as const,
      run: 1,
    });
    await giveUp(1);
    expect(await eventOf(eventId)).toMatchObject({ status: 'delivered' });
    await ts.env.client.workflow.getHandle(workflowIds.webhook(eventId, 0)).terminate('test over');
  });

  it('records an unreachable receiver as a failed attempt, not a crash', async () => {
    const eventId = await paidTransactionWithWebhook();
    await ts.database.db
      .update(webhookEvents)
      .set({ url: 'http://127.0.0.1:9/closed' })
      .where(eq(webhookEvents.id, eventId));
    const outcome = await ts.env.client.workflow.execute(webhookDelivery, {
      workflowId: `${eventId}-manual`,
      taskQueue: ts.taskQueue,
      args: [{ eventId, run: 1, delaysSeconds: [5], windowSeconds: 12 }],
    });
    expect(outcome).toBe('undelivered');
    const attempts = await ts.database.db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.eventId, eventId));
    expect(attempts.filter((a) => a.run === 1).map((a) => a.error)).toEqual([
      'connection failed',
      'connection failed',
      'connection failed',
    ]);
  });
});
