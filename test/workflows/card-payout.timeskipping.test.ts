import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asc, eq, like } from 'drizzle-orm';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { insertPayoutTransaction } from '../helpers/fixtures';
import {
  cardVault,
  ledgerEntries,
  sandboxOperations,
  transactions,
  wallets,
} from '../../src/db/schema/index';
import { cardPayout } from '../../workflows/card-payout';
import type { MerchantCredentials } from '../../src/merchants/accounts';
import type { PayoutStep } from '../../activities/payouts';
import type { PayoutProcessor } from '../../activities/connectors/types';
import { sandboxPayouts } from '../../activities/connectors/sandbox-payouts';
import { payoutActivities } from '../../activities/payouts';
import { connectorKeys, type CardPayoutInput } from '../../src/contracts';
import { faultyConnectors, type FaultPlan } from '../helpers/faulty-connectors';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let ts: TimeSkippingEnv;
let merchant: MerchantCredentials;

/** Per transaction, its faults: sends refused (nothing done), workers lost at points of the payout's step. */
const plans = new Map<string, FaultPlan>();
/** Lookups the processor was asked, across the file. */
let lookups = 0;

beforeAll(async () => {
  ts = await startTimeSkipping({}, (database) => {
    const faulty = faultyConnectors(database.db, plans);
    const lookup: PayoutProcessor['lookup'] = (request) => ((lookups += 1), faulty.payout.lookup(request));
    return {
      payoutConnectors: { 'sandbox-payouts': { ...faulty.payout, lookup } },
      afterPayoutStep: faulty.afterPayoutStep,
    };
  });
  merchant = await ts.createMerchant();
});
afterAll(() => ts?.close());

/** A payout of 300 minor units to `pan`, its row and vaulted card in place, with the faults of `plan`. */
async function newPayout(pan: string, plan: FaultPlan = {}) {
  const input = await insertPayoutTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
    pan,
    amountMinor: 300n,
  });
  plans.set(input.transactionId, plan);
  return input;
}

function startPayout(input: CardPayoutInput) {
  return ts.env.client.workflow.start(cardPayout, {
    workflowId: input.transactionId,
    taskQueue: ts.taskQueue,
    args: [input],
  });
}

async function available(walletId: string): Promise<bigint> {
  const [wallet] = await ts.database.db.select().from(wallets).where(eq(wallets.id, walletId));
  return wallet!.available;
}

async function ledgerOf(transactionId: string) {
  return ts.database.db
    .select({ step: ledgerEntries.step, amount: ledgerEntries.amount })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.reference, transactionId))
    .orderBy(asc(ledgerEntries.id));
}

const reservedAndSettled = [
  { step: 'reserve', amount: -300n },
  { step: 'settle', amount: 0n },
];

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
      const crashAfter = [...plan];
      const input = await newPayout('4222222222222222', { crashAfter });
      const before = await available(input.walletId);
      const result = await (await startPayout(input)).result();
      expect(result.status).toBe('SUCCESS');
      expect(crashAfter, 'every planned loss happened').toEqual([]);
      expect(await processorStates(input.transactionId)).toEqual(['paid']);
      expect(await ledgerOf(input.transactionId)).toEqual(reservedAndSettled);
      expect(await available(input.walletId)).toBe(before - 300n);
      const [vault] = await ts.database.db
        .select()
        .from(cardVault)
        .where(eq(cardVault.transactionId, input.transactionId));
      expect(vault!.panEnc, 'the card is gone once the payout is final').toBeNull();
    });
  }

  it('takes a refusal as definite when the attempt that sends is the one that reserved', async () => {
    // The first attempt is lost before its reserve; the second reserves and is refused at the send.
    const input = await newPayout('4222222222222222', { crashAfter: ['started'], send: ['refuse'] });
    const before = lookups;
    const handle = await startPayout(input);
    expect((await handle.result()).status).toBe('SUCCESS');
    // Nothing was asked of the processor: the refusal said nothing was sent, and the next round paid.
    expect(lookups - before).toBe(0);
    const history = await handle.fetchHistory();
    const timers = history.events?.filter((e) => e.timerStartedEventAttributes) ?? [];
    expect(timers.length, 'the round after every terminal refused').toBe(1);
    expect(await processorStates(input.transactionId)).toEqual(['paid']);
    expect(await ledgerOf(input.transactionId)).toEqual(reservedAndSettled);
  });

  it('asks the processor when a refusal follows an attempt that may have sent', async () => {
    // The first attempt is lost after its reserve: it may have reached the send, so the refusals of the
    // two attempts left prove nothing and the processor is asked.
    const input = await newPayout('4222222222222222', {
      crashAfter: ['reserved'],
      send: ['refuse', 'refuse'],
    });
    const before = lookups;
    expect((await (await startPayout(input)).result()).status).toBe('SUCCESS');
    expect(lookups - before).toBeGreaterThan(0);
    expect(await processorStates(input.transactionId)).toEqual(['paid']);
    expect(await ledgerOf(input.transactionId)).toEqual(reservedAndSettled);
  });

  it('sends nothing from an attempt held up past half its time before the send', async () => {
    const input = await newPayout('4222222222222222');
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
    expect(await ledgerOf(input.transactionId)).toEqual(reservedAndSettled);
  });

  it('releases once when the processor declines after a loss following the reserve', async () => {
    const input = await newPayout('4333333333333333', { crashAfter: ['reserved'] });
    const before = await available(input.walletId);
    expect((await (await startPayout(input)).result()).status).toBe('FAILED');
    expect(await processorStates(input.transactionId)).not.toContain('paid');
    expect(await ledgerOf(input.transactionId)).toEqual([
      { step: 'reserve', amount: -300n },
      { step: 'release', amount: 300n },
    ]);
    expect(await available(input.walletId)).toBe(before);
  });
});

describe('card payout workflow (time-skipping)', () => {
  it('fails a verification nobody answers within 24 hours and releases the reservation', async () => {
    const input = await insertPayoutTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
      pan: '4000000000003220',
    });
    const before = await available(input.walletId);
    const handle = await startPayout(input);
    const started = Date.now();
    const result = await handle.result();
    expect(result).toEqual({ status: 'FAILED', message: 'Payout verification expired.' });
    expect(Date.now() - started).toBeLessThan(60_000);

    const history = await handle.fetchHistory();
    const timer = history.events?.find((e) => e.timerStartedEventAttributes);
    expect(Number(timer?.timerStartedEventAttributes?.startToFireTimeout?.seconds)).toBe(24 * 60 * 60);

    expect(await ledgerOf(input.transactionId)).toEqual([
      { step: 'reserve', amount: -500n },
      { step: 'release', amount: 500n },
    ]);
    expect(await available(input.walletId)).toBe(before);
    const [row] = await ts.database.db
      .select()
      .from(transactions)
      .where(eq(transactions.id, input.transactionId));
    expect(row).toMatchObject({ status: 'FAILED', message: 'Payout verification expired.' });
  });
});
