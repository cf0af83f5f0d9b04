import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { insertPayinTransaction, insertRampTransaction } from '../helpers/fixtures';
import { localActivitiesOf } from '../helpers/local-activities';
import { cryptoTolerances, ledgerEntries, merchants, transactions } from '../../src/db/schema/index';
import { cryptoPayin } from '../../workflows/crypto-payin';
import { cryptoRamp } from '../../workflows/crypto-ramp';
import { depositUpdate, firstAnswerUpdate } from '../../src/contracts';
import type { MerchantCredentials } from '../../src/merchants/accounts';
import { WorkflowUpdateStage, type WorkflowHandle } from '@temporalio/client';

let ts: TimeSkippingEnv;
let merchant: MerchantCredentials;

beforeAll(async () => {
  ts = await startTimeSkipping();
  merchant = await ts.createMerchant();
});
afterAll(() => ts?.close());

/** Starts the payin, waits for its address to open, then sends the deposits (USDT base units, 6 decimals). */
async function payin(deposits: string[]): Promise<{ handle: WorkflowHandle; id: string }> {
  const input = await insertPayinTransaction(ts.database.db, merchant);
  const handle = await ts.env.client.workflow.start(cryptoPayin, {
    workflowId: input.transactionId,
    taskQueue: ts.taskQueue,
    args: [input],
  });
  await handle.executeUpdate(firstAnswerUpdate);
  for (const [i, units] of deposits.entries()) {
    await handle.executeUpdate(depositUpdate, { args: [{ txHash: `tx${i}`, units, sender: 'Tsender' }] });
  }
  return { handle, id: input.transactionId };
}

async function row(id: string) {
  const [found] = await ts.database.db.select().from(transactions).where(eq(transactions.id, id));
  return found!;
}

async function credits(id: string) {
  return ts.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.reference, id));
}

describe('crypto settlement (time-skipping)', () => {
  it('settles an exact payment as FULLPAID and credits the wallet once', async () => {
    const { handle, id } = await payin(['100000000']);
    expect(await handle.result()).toEqual({
      status: 'SUCCESS',
      message: 'Transaction processed successfully.',
    });
    expect((await row(id)).details).toMatchObject({
      crypto_payment_status: 'FULLPAID',
      crypto_paid_amount: '100',
    });
    expect((await credits(id)).map((e) => e.amount)).toEqual([10000n]);
    // Its first step bound the run and opened the deposit address with the settings: no step of their own.
    const steps = await localActivitiesOf(handle);
    expect(steps[0]).toBe('bindRun');
    expect(steps).not.toContain('cryptoSettings');
    expect(steps).not.toContain('openDepositAddress');
    expect((await row(id)).details).toMatchObject({ deposit_address: expect.any(String) });
  });

  it('settles an overpayment as OVERPAID and keeps the excess by default', async () => {
    const { handle, id } = await payin(['100000001']);
    expect((await handle.result()).status).toBe('SUCCESS');
    expect((await row(id)).details).toMatchObject({
      crypto_payment_status: 'OVERPAID',
      crypto_paid_amount: '100.000001',
    });
    expect((await row(id)).details).not.toHaveProperty('refund_amount');
  });

  it('adds two deposits up to the amount', async () => {
    const { handle, id } = await payin(['40000000', '60000000']);
    expect((await handle.result()).status).toBe('SUCCESS');
    expect((await row(id)).details).toMatchObject({
      crypto_payment_status: 'FULLPAID',
      crypto_paid_amount: '100',
    });
  });

  it('counts a repeated transaction hash once', async () => {
    const input = await insertPayinTransaction(ts.database.db, merchant);
    const handle = await ts.env.client.workflow.start(cryptoPayin, {
      workflowId: input.transactionId,
      taskQueue: ts.taskQueue,
      args: [input],
    });
    await handle.executeUpdate(firstAnswerUpdate);
    await handle.executeUpdate(depositUpdate, { args: [{ txHash: 'same', units: '60000000' }] });
    await handle.executeUpdate(depositUpdate, { args: [{ txHash: 'same', units: '60000000' }] });
    expect(await handle.result()).toMatchObject({ status: 'FAILED' });
    expect((await row(input.transactionId)).details).toMatchObject({
      crypto_payment_status: 'UNDERPAID',
      crypto_paid_amount: '60',
    });
  });

  it('fails an underpayment at the 60-minute deadline and refunds the deposit', async () => {
    const { handle, id } = await payin(['30000000']);
    expect(await handle.result()).toEqual({
      status: 'FAILED',
      message: 'Transaction underpaid: the deposit was refunded.',
    });
    const final = await row(id);
    expect(final.details).toMatchObject({
      crypto_payment_status: 'UNDERPAID',
      crypto_paid_amount: '30',
      refund_amount: '30',
    });
    expect(final.refunded).toBe(true);
    expect(await credits(id)).toEqual([]);
    const history = await handle.fetchHistory();
    const timer = history.events?.find((e) => e.timerStartedEventAttributes);
    expect(Number(timer?.timerStartedEventAttributes?.startToFireTimeout?.seconds)).toBe(3600);
  });

  it('fails with "Transaction expired." when nothing arrives', async () => {
    const { handle, id } = await payin([]);
    expect(await handle.result()).toEqual({ status: 'FAILED', message: 'Transaction expired.' });
    expect((await row(id)).details).toMatchObject({ crypto_payment_status: null, crypto_paid_amount: '0' });
  });

  it('honours the merchant tolerance and the accept-underpaid and refund-overpaid settings', async () => {
    await ts.database.db
      .update(merchants)
      .set({ underpaidPolicy: 'accept', overpaidPolicy: 'refund' })
      .where(eq(merchants.id, merchant.merchant_id));
    await ts.database.db
      .insert(cryptoTolerances)
      .values({ merchantId: merchant.merchant_id, cryptoCurrency: 'USDT', tolerance: '0.5' });
    try {
      const within = await payin(['99600000']);
      expect((await within.handle.result()).status).toBe('SUCCESS');
      expect((await row(within.id)).details).toMatchObject({ crypto_payment_status: 'FULLPAID' });

      const partial = await payin(['20000000']);
      expect(await partial.handle.result()).toEqual({
        status: 'SUCCESS',
        message: 'Transaction accepted for the partial amount.',
      });
      expect((await row(partial.id)).details).toMatchObject({ crypto_payment_status: 'UNDERPAID' });

      const over = await payin(['102000000']);
      expect((await over.handle.result()).status).toBe('SUCCESS');
      expect((await row(over.id)).details).toMatchObject({
        crypto_payment_status: 'OVERPAID',
        refund_amount: '2',
      });
    } finally {
      await ts.database.db.execute(
        sql`update merchants set underpaid_policy = 'fail', overpaid_policy = 'keep' where id = ${merchant.merchant_id}`,
      );
      await ts.database.db
        .delete(cryptoTolerances)
        .where(eq(cryptoTolerances.merchantId, merchant.merchant_id));
    }
  });

  it('fails an ONRAMP nobody pays within 30 minutes', async () => {
    const input = await insertRampTransaction(ts.database.db, merchant, 'ONRAMP');
    const handle = await ts.env.client.workflow.start(cryptoRamp, {
      workflowId: input.transactionId,
      taskQueue: ts.taskQueue,
      args: [input],
    });
    expect(await handle.result()).toEqual({ status: 'FAILED', message: 'Transaction expired.' });
    const history = await handle.fetchHistory();
    const timer = history.events?.find((e) => e.timerStartedEventAttributes);
    expect(Number(timer?.timerStartedEventAttributes?.startToFireTimeout?.seconds)).toBe(1800);
  });

  it('pays an OFFRAMP out after its deposit settles', async () => {
    const input = await insertRampTransaction(ts.database.db, merchant, 'OFFRAMP');
    const handle = await ts.env.client.workflow.start(cryptoRamp, {
      workflowId: input.transactionId,
      taskQueue: ts.taskQueue,
      args: [input],
    });
    await handle.executeUpdate(firstAnswerUpdate);
    await handle.executeUpdate(depositUpdate, { args: [{ txHash: 'offramp', units: '100000000' }] });
    expect((await handle.result()).status).toBe('SUCCESS');
    expect((await row(input.transactionId)).details.fiat_payout_reference).toMatch(/^sbxf_/);
    expect((await localActivitiesOf(handle)).slice(0, 2)).toEqual(['bindRun', 'project']);
  });
});

describe('a deposit that arrives while the payin is still showing its address', () => {
  // The move to REDIRECT is held at its projection until the test lets it go: the deposit handler is
  // registered by then, the deposit window not yet open. A deposit sent at once after a create whose
  // first answer came back PENDING lands there (the fault suite found it under load).
  let held: TimeSkippingEnv;
  let reached: () => void = () => undefined;
  let release: () => void = () => undefined;
  const atRedirect = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  beforeAll(async () => {
    held = await startTimeSkipping(
      {},
      {
        wrap: (activities) => ({
          async project(input) {
            if (input.status === 'REDIRECT') {
              reached();
              await released;
            }
            return activities.project(input);
          },
        }),
      },
    );
  });
  afterAll(() => held?.close());

  it('counts it once the window opens, instead of refunding it as late', async () => {
    const own = await held.createMerchant();
    const input = await insertPayinTransaction(held.database.db, own);
    const handle = await held.env.client.workflow.start(cryptoPayin, {
      workflowId: input.transactionId,
      taskQueue: held.taskQueue,
      args: [input],
      // The held step keeps its workflow task open: the update gets in when the worker heartbeats the
      // task, at 80% of this timeout (the 10 s default made each test wait 16 s).
      workflowTaskTimeout: '2 seconds',
    });
    await atRedirect;
    const update = await handle.startUpdate(depositUpdate, {
      args: [{ txHash: 'early', units: '100000000', sender: 'Tsender' }],
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    });
    release();
    expect((await update.result()).disposition).toBe('counted');
    expect(await handle.result()).toEqual({
      status: 'SUCCESS',
      message: 'Transaction processed successfully.',
    });
    const [found] = await held.database.db
      .select()
      .from(transactions)
      .where(eq(transactions.id, input.transactionId));
    expect(found!.details).toMatchObject({ crypto_payment_status: 'FULLPAID', crypto_paid_amount: '100' });
  });
});

describe('a deposit that arrives while the transaction is still opening its address', () => {
  // The address is held at its opening until the test lets it go: a sandbox deposit made at once after a
  // create whose first answer came back PENDING (a worker restarting, Postgres away) lands there. The fault
  // suite found such deposits refused for want of a handler, held for ops, and their payments left open.
  let held: TimeSkippingEnv;
  let gate = { reached: () => undefined as void, release: () => undefined as void };
  let opening = Promise.resolve();
  let released = Promise.resolve();
  const closeGate = () => {
    opening = new Promise<void>((resolve) => (gate.reached = resolve));
    released = new Promise<void>((resolve) => (gate.release = resolve));
  };
  beforeAll(async () => {
    held = await startTimeSkipping(
      {},
      {
        wrap: (activities) => ({
          // The address opens in the run's first step, with its binding (activities/index.ts).
          async bindRun(input) {
            if (input.deposits) {
              gate.reached();
              await released;
            }
            return activities.bindRun(input);
          },
        }),
      },
    );
  });
  afterAll(() => held?.close());

  for (const kind of ['payin', 'OFFRAMP'] as const) {
    it(`counts it once the address is open (${kind})`, async () => {
      gate = { reached: () => undefined, release: () => undefined };
      closeGate();
      const own = await held.createMerchant();
      const input =
        kind === 'payin'
          ? await insertPayinTransaction(held.database.db, own)
          : await insertRampTransaction(held.database.db, own, 'OFFRAMP');
      const handle = await held.env.client.workflow.start(kind === 'payin' ? cryptoPayin : cryptoRamp, {
        workflowId: input.transactionId,
        taskQueue: held.taskQueue,
        args: [input as never],
        workflowTaskTimeout: '2 seconds',
      });
      await opening;
      const update = await handle.startUpdate(depositUpdate, {
        args: [{ txHash: 'before-the-address', units: '100000000', sender: 'Tsender' }],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      gate.release();
      expect((await update.result()).disposition).toBe('counted');
      expect((await handle.result()).status).toBe('SUCCESS');
      expect(
        (
          await held.database.db.select().from(transactions).where(eq(transactions.id, input.transactionId))
        )[0]!.details,
      ).toMatchObject({
        crypto_payment_status: 'FULLPAID',
        crypto_paid_amount: '100',
      });
    });
  }
});
