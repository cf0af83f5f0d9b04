import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asc, eq, like } from 'drizzle-orm';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { insertPayoutTransaction } from '../helpers/fixtures';
import { ledgerEntries, sandboxOperations, transactions, wallets } from '../../src/db/schema/index';
import { cardPayout } from '../../workflows/card-payout';
import type { MerchantCredentials } from '../../src/merchants/accounts';
import type { PayoutStep } from '../../activities/payouts';
import type { PayoutProcessor } from '../../activities/connectors/types';
import { NotProcessedError } from '../../activities/connectors/errors';
import { sandboxPayouts } from '../../activities/connectors/sandbox-payouts';
import { payoutActivities } from '../../activities/payouts';
import { connectorKeys } from '../../src/contracts';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let ts: TimeSkippingEnv;
let merchant: MerchantCredentials;

/** Per transaction, how many sends the processor refuses (nothing done); and the lookups it was asked. */
const refusals = new Map<string, number>();
let lookups = 0;

/** Per transaction, the points of the combined payout step where the worker is lost, each once. */
const crashes = new Map<string, PayoutStep[]>();
let crashed: string[] = [];

beforeAll(async () => {
  ts = await startTimeSkipping({}, (database) => ({
    payoutConnectors: { 'sandbox-payouts': refusingOnce(sandboxPayouts(database.db)) },
    afterPayoutStep: (step, transactionId) => {
      const plan = crashes.get(transactionId);
      const at = plan?.indexOf(step) ?? -1;
      if (at < 0) return;
      plan!.splice(at, 1);
      crashed.push(step);
      throw new Error(`injected: worker lost after ${step}`);
    },
  }));
  merchant = await ts.createMerchant();
});
afterAll(() => ts?.close());

function refusingOnce(processor: PayoutProcessor): PayoutProcessor {
  return {
    send: async (request) => {
      const left = refusals.get(request.transactionId) ?? 0;
      if (left > 0) {
        refusals.set(request.transactionId, left - 1);
        throw new NotProcessedError('refused, nothing done');
      }
      return processor.send(request);
    },
    confirm: (request) => processor.confirm(request),
    lookup: async (request) => {
      lookups += 1;
      return processor.lookup(request);
    },
  };
}

async function ledgerOf(transactionId: string) {
  return ts.database.db
    .select({ step: ledgerEntries.step, amount: ledgerEntries.amount })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.reference, transactionId))
    .orderBy(asc(ledgerEntries.id));
}

async function processorStates(transactionId: string) {
  const rows = await ts.database.db
    .select({ state: sandboxOperations.state })
    .from(sandboxOperations)
    .where(like(sandboxOperations.idempotencyKey, `${transactionId}:%`));
  return rows.map((r) => r.state);
}

describe('a payout cut short between the steps of its combined step (time-skipping)', () => {
  // Three losses spend the step's attempts: the workflow then asks the processor what happened.
  const plans: PayoutStep[][] = [
    ['reserved'],
    ['sent'],
    ['settled'],
    ['reserved', 'reserved', 'reserved'],
    ['sent', 'sent', 'sent'],
    ['settled', 'settled', 'settled'],
    ['reserved', 'sent', 'settled'],
  ];
  for (const plan of plans) {
    it(`pays once and debits once when the worker is lost after ${plan.join(', ')}`, async () => {
      const input = await insertPayoutTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
        pan: '4222222222222222',
        amountMinor: 300n,
      });
      crashes.set(input.transactionId, [...plan]);
      crashed = [];
      const [before] = await ts.database.db.select().from(wallets).where(eq(wallets.id, input.walletId));
      const result = await ts.env.client.workflow.execute(cardPayout, {
        workflowId: input.transactionId,
        taskQueue: ts.taskQueue,
        args: [input],
      });
      expect(result.status).toBe('SUCCESS');
      expect(crashed, 'every planned loss happened').toEqual(plan);
      expect(await processorStates(input.transactionId)).toEqual(['paid']);
      expect(await ledgerOf(input.transactionId)).toEqual([
        { step: 'reserve', amount: -300n },
        { step: 'settle', amount: 0n },
      ]);
      const [after] = await ts.database.db.select().from(wallets).where(eq(wallets.id, input.walletId));
      expect(after!.available).toBe(before!.available - 300n);
    });
  }

  it('takes a refusal as definite when the attempt that sends is the one that reserved', async () => {
    const input = await insertPayoutTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
      pan: '4222222222222222',
      amountMinor: 300n,
    });
    // The first attempt is lost before its reserve; the second reserves and is refused at the send.
    crashes.set(input.transactionId, ['started']);
    refusals.set(input.transactionId, 1);
    lookups = 0;
    const handle = await ts.env.client.workflow.start(cardPayout, {
      workflowId: input.transactionId,
      taskQueue: ts.taskQueue,
      args: [input],
    });
    const result = await handle.result();
    expect(result.status).toBe('SUCCESS');
    // Nothing was asked of the processor: the refusal said nothing was sent, and the next round paid.
    expect(lookups).toBe(0);
    const history = await handle.fetchHistory();
    const timers = history.events?.filter((e) => e.timerStartedEventAttributes) ?? [];
    expect(timers.length, 'the round after every terminal refused').toBe(1);
    expect(await processorStates(input.transactionId)).toEqual(['paid']);
    expect(await ledgerOf(input.transactionId)).toEqual([
      { step: 'reserve', amount: -300n },
      { step: 'settle', amount: 0n },
    ]);
  });

  it('asks the processor when a refusal follows an attempt that may have sent', async () => {
    const input = await insertPayoutTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
      pan: '4222222222222222',
      amountMinor: 300n,
    });
    // The first attempt is lost after its reserve: it may have reached the send, so the refusals of the
    // two attempts left prove nothing and the processor is asked.
    crashes.set(input.transactionId, ['reserved']);
    refusals.set(input.transactionId, 2);
    lookups = 0;
    const result = await ts.env.client.workflow.execute(cardPayout, {
      workflowId: input.transactionId,
      taskQueue: ts.taskQueue,
      args: [input],
    });
    expect(result.status).toBe('SUCCESS');
    expect(lookups).toBeGreaterThan(0);
    expect(await processorStates(input.transactionId)).toEqual(['paid']);
  });

  it('sends nothing from an attempt held up past half its time before the send', async () => {
    const input = await insertPayoutTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
      pan: '4222222222222222',
      amountMinor: 300n,
    });
    let sends = 0;
    const processor = sandboxPayouts(ts.database.db);
    const activities = payoutActivities(
      ts.database.db,
      ts.config.MASTER_KEY,
      { 'sandbox-payouts': { ...processor, send: (request) => ((sends += 1), processor.send(request)) } },
      // The reserve waits, as on a wallet row locked by another payout.
      { afterStep: (step) => (step === 'reserved' ? pause(150) : undefined) },
    );
    const request = {
      transactionId: input.transactionId,
      payoutKey: connectorKeys.payout(input.transactionId, 'any'),
      mode: input.mode,
      connector: 'sandbox-payouts',
      amountMinor: '300',
      currency: 'USD',
      funds: { walletId: input.walletId, amountMinor: '300' },
    };
    const late = new MockActivityEnvironment(
      { startToCloseTimeoutMs: 200 },
      { logger: new DefaultLogger('ERROR') },
    );
    await expect(late.run(activities.reserveAndSendPayout, request)).rejects.toThrow('its attempt ran late');
    expect(sends).toBe(0);
    // In time, the retry sends once, over the reserve already taken.
    const inTime = new MockActivityEnvironment(
      { startToCloseTimeoutMs: 30_000, attempt: 2 },
      { logger: new DefaultLogger('ERROR') },
    );
    await expect(inTime.run(activities.reserveAndSendPayout, request)).resolves.toMatchObject({
      outcome: 'paid',
      settled: true,
    });
    expect(sends).toBe(1);
    expect(await ledgerOf(input.transactionId)).toEqual([
      { step: 'reserve', amount: -300n },
      { step: 'settle', amount: 0n },
    ]);
  });

  it('releases once when the processor declines after a loss following the reserve', async () => {
    const input = await insertPayoutTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
      pan: '4333333333333333',
      amountMinor: 300n,
    });
    crashes.set(input.transactionId, ['reserved']);
    const [before] = await ts.database.db.select().from(wallets).where(eq(wallets.id, input.walletId));
    const result = await ts.env.client.workflow.execute(cardPayout, {
      workflowId: input.transactionId,
      taskQueue: ts.taskQueue,
      args: [input],
    });
    expect(result.status).toBe('FAILED');
    expect(await processorStates(input.transactionId)).not.toContain('paid');
    expect(await ledgerOf(input.transactionId)).toEqual([
      { step: 'reserve', amount: -300n },
      { step: 'release', amount: 300n },
    ]);
    const [after] = await ts.database.db.select().from(wallets).where(eq(wallets.id, input.walletId));
    expect(after!.available).toBe(before!.available);
  });
});

describe('card payout workflow (time-skipping)', () => {
  it('fails a verification nobody answers within 24 hours and releases the reservation', async () => {
    const input = await insertPayoutTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
      pan: '4000000000003220',
    });
    const [before] = await ts.database.db.select().from(wallets).where(eq(wallets.id, input.walletId));
    const handle = await ts.env.client.workflow.start(cardPayout, {
      workflowId: input.transactionId,
      taskQueue: ts.taskQueue,
      args: [input],
    });
    const started = Date.now();
    const result = await handle.result();
    expect(result).toEqual({ status: 'FAILED', message: 'Payout verification expired.' });
    expect(Date.now() - started).toBeLessThan(60_000);

    const history = await handle.fetchHistory();
    const timer = history.events?.find((e) => e.timerStartedEventAttributes);
    expect(Number(timer?.timerStartedEventAttributes?.startToFireTimeout?.seconds)).toBe(24 * 60 * 60);

    const steps = await ts.database.db
      .select({ step: ledgerEntries.step, amount: ledgerEntries.amount })
      .from(ledgerEntries)
      .where(eq(ledgerEntries.reference, input.transactionId))
      .orderBy(asc(ledgerEntries.id));
    expect(steps).toEqual([
      { step: 'reserve', amount: -500n },
      { step: 'release', amount: 500n },
    ]);
    const [wallet] = await ts.database.db.select().from(wallets).where(eq(wallets.id, input.walletId));
    expect(wallet!.available).toBe(before!.available);
    const [row] = await ts.database.db
      .select()
      .from(transactions)
      .where(eq(transactions.id, input.transactionId));
    expect(row).toMatchObject({ status: 'FAILED', message: 'Payout verification expired.' });
  });
});
