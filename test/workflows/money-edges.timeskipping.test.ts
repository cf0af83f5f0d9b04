import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asc, eq, like } from 'drizzle-orm';
import { WorkflowUpdateStage, type WorkflowHandle } from '@temporalio/client';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import {
  insertCardTransaction,
  insertPayinTransaction,
  insertPayoutTransaction,
  insertRampTransaction,
} from '../helpers/fixtures';
import {
  cardVault,
  cryptoDeposits,
  cryptoTolerances,
  ledgerEntries,
  merchants,
  sandboxOperations,
  transactions,
  wallets,
  webhookEvents,
} from '../../src/db/schema/index';
import { cardPayment } from '../../workflows/card-payment';
import { cardPayout } from '../../workflows/card-payout';
import { cryptoPayin } from '../../workflows/crypto-payin';
import { cryptoRamp } from '../../workflows/crypto-ramp';
import { depositUpdate, firstAnswerUpdate, hostedDecisionUpdate, type Deposit } from '../../src/contracts';
import type { MerchantCredentials } from '../../src/merchants/accounts';
import { addTerminal } from '../../src/merchants/terminals';
import { sandboxPayouts } from '../../activities/connectors/sandbox-payouts';
import type { PayoutProcessor } from '../../activities/connectors/types';
import { formatUnits, parseUnits } from '../../src/lib/units';

/** Payout keys whose confirmation calls fail (before reaching the processor) this many more times. */
const confirmFailures = new Map<string, number>();
let processor: PayoutProcessor;
const flakyConfirms: PayoutProcessor = {
  send: (request) => processor.send(request),
  lookup: (request) => processor.lookup(request),
  async confirm(request) {
    const left = confirmFailures.get(request.payoutKey) ?? 0;
    if (left > 0) {
      confirmFailures.set(request.payoutKey, left - 1);
      throw new Error('processor unreachable');
    }
    return processor.confirm(request);
  },
};

let ts: TimeSkippingEnv;
let merchant: MerchantCredentials;

beforeAll(async () => {
  ts = await startTimeSkipping({}, { payoutConnectors: { 'sandbox-payouts': flakyConfirms } });
  processor = sandboxPayouts(ts.database.db);
  merchant = await ts.createMerchant();
});
afterAll(() => ts?.close());

const db = () => ts.database.db;

async function start<T extends { transactionId: string }>(
  workflow: (input: T) => Promise<unknown>,
  input: T,
): Promise<WorkflowHandle> {
  const handle = await ts.env.client.workflow.start(workflow, {
    workflowId: input.transactionId,
    taskQueue: ts.taskQueue,
    args: [input],
  });
  await handle.executeUpdate(firstAnswerUpdate);
  return handle;
}

async function row(id: string) {
  const [found] = await db().select().from(transactions).where(eq(transactions.id, id));
  return found!;
}

async function ledgerOf(id: string) {
  const entries = await db()
    .select({ step: ledgerEntries.step, amount: ledgerEntries.amount })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.reference, id))
    .orderBy(asc(ledgerEntries.id));
  return entries.map((e) => [e.step, e.amount]);
}

async function depositsOf(id: string) {
  return db()
    .select()
    .from(cryptoDeposits)
    .where(eq(cryptoDeposits.transactionId, id))
    .orderBy(asc(cryptoDeposits.txHash));
}

const deposit = (txHash: string, units: string): Deposit => ({ txHash, units, sender: `sender-${txHash}` });

async function setPolicies(values: Partial<typeof merchants.$inferInsert>) {
  await db().update(merchants).set(values).where(eq(merchants.id, merchant.merchant_id));
}

describe('crypto settlement at the edges (time-skipping)', () => {
  it('credits an accepted underpayment at the locked rate, never the quoted amount', async () => {
    await setPolicies({ underpaidPolicy: 'accept' });
    try {
      const input = await insertPayinTransaction(db(), merchant);
      const handle = await start(cryptoPayin, input);
      await handle.executeUpdate(depositUpdate, { args: [deposit('partial', '20000000')] });
      expect(await handle.result()).toEqual({
        status: 'SUCCESS',
        message: 'Transaction accepted for the partial amount.',
      });
      expect((await row(input.transactionId)).details).toMatchObject({ crypto_payment_status: 'UNDERPAID' });
      // 20 of 100 USDT locked at 100 USD: 20 USD, not the 100 quoted.
      expect(await ledgerOf(input.transactionId)).toEqual([['credit', 2000n]]);
    } finally {
      await setPolicies({ underpaidPolicy: 'fail' });
    }
  });

  it('credits the kept excess of an overpayment at the locked rate, rounded down', async () => {
    const input = await insertPayinTransaction(db(), merchant);
    const handle = await start(cryptoPayin, input);
    await handle.executeUpdate(depositUpdate, { args: [deposit('over', '102345678')] });
    expect((await handle.result()).status).toBe('SUCCESS');
    // 102.345678 USDT at 1 USD each is 102.345678 USD: 10234 cents, the fraction of a cent dropped.
    expect(await ledgerOf(input.transactionId)).toEqual([['credit', 10234n]]);
  });

  it('accounts every deposit of a burst exactly once, the ones after completion included', async () => {
    const input = await insertPayinTransaction(db(), merchant);
    const handle = await start(cryptoPayin, input);
    const receipts = await Promise.all(
      [deposit('a', '100000000'), deposit('b', '50000000'), deposit('c', '25000000')].map((d) =>
        handle.executeUpdate(depositUpdate, { args: [d] }),
      ),
    );
    await handle.result();
    const final = await row(input.transactionId);
    const rows = await depositsOf(input.transactionId);
    expect(rows.map((r) => r.txHash)).toEqual(['a', 'b', 'c']);
    const counted = rows.filter((r) => r.countedInPayment);
    // The column keeps 18 decimals; USDT has 6.
    const paid = counted.reduce((sum, r) => sum + parseUnits(r.amount, 18)! / 10n ** 12n, 0n);
    expect(final.details.crypto_paid_amount).toBe(formatUnits(paid, 6));
    for (const [i, r] of rows.entries()) {
      expect(['counted', 'refunded']).toContain(r.disposition);
      expect(receipts[i]!.disposition).toBe(r.countedInPayment ? 'counted' : 'refunded');
      if (!r.countedInPayment) {
        expect(r).toMatchObject({
          disposition: 'refunded',
          refundAmount: r.amount,
          reason: expect.any(String),
        });
        expect(r.refundTxHash).toMatch(/^0x/);
      }
    }
    // What was kept is what was credited, at the locked rate (1 USD a USDT): cents, rounded down.
    expect(await ledgerOf(input.transactionId)).toEqual([['credit', paid / 10_000n]]);
  });

  it('accounts an OFFRAMP deposit that arrives after completion', async () => {
    const input = await insertRampTransaction(db(), merchant, 'OFFRAMP');
    const handle = await start(cryptoRamp, input);
    const [, late] = await Promise.all([
      handle.executeUpdate(depositUpdate, { args: [deposit('first', '100000000')] }),
      handle.executeUpdate(depositUpdate, { args: [deposit('second', '100000000')] }),
    ]);
    await handle.result();
    const rows = await depositsOf(input.transactionId);
    expect(rows).toHaveLength(2);
    const paid = (await row(input.transactionId)).details.crypto_paid_amount;
    const countedTotal = rows.filter((r) => r.countedInPayment).reduce((s, r) => s + Number(r.amount), 0);
    expect(String(countedTotal)).toBe(paid);
    if (late!.disposition === 'refunded') {
      expect(rows.find((r) => r.txHash === 'second')).toMatchObject({ disposition: 'refunded' });
    }
  });

  it('judges a tolerance set for one asset in that asset only', async () => {
    await db()
      .insert(cryptoTolerances)
      .values({ merchantId: merchant.merchant_id, cryptoCurrency: 'USDT', tolerance: '0.5' });
    try {
      // 0.5 of the BTC asked for is missing: a USDT tolerance of 0.5 says nothing about BTC.
      const input = await insertPayinTransaction(db(), merchant, {
        cryptoCurrency: 'BTC',
        cryptoNetwork: 'BITCOIN',
        decimals: 8,
        expectedUnits: '100000000',
        fiatMinor: '6000000',
      });
      const handle = await start(cryptoPayin, input);
      await handle.executeUpdate(depositUpdate, { args: [deposit('btc', '50000000')] });
      expect(await handle.result()).toMatchObject({ status: 'FAILED' });
      expect((await row(input.transactionId)).details).toMatchObject({ crypto_payment_status: 'UNDERPAID' });
      expect(await ledgerOf(input.transactionId)).toEqual([]);
    } finally {
      await db().delete(cryptoTolerances).where(eq(cryptoTolerances.merchantId, merchant.merchant_id));
    }
  });

  it('converts a fiat tolerance at the locked rate', async () => {
    await setPolicies({ cryptoToleranceFiat: '1.00' });
    try {
      // 1 BTC locked at 60,000 USD: a 1.00 USD tolerance is 1,666 satoshi.
      const btc = {
        cryptoCurrency: 'BTC',
        cryptoNetwork: 'BITCOIN',
        decimals: 8,
        expectedUnits: '100000000',
        fiatMinor: '6000000',
      };
      const within = await insertPayinTransaction(db(), merchant, btc);
      const inside = await start(cryptoPayin, within);
      await inside.executeUpdate(depositUpdate, { args: [deposit('in', String(100000000 - 1666))] });
      expect((await inside.result()).status).toBe('SUCCESS');
      expect((await row(within.transactionId)).details).toMatchObject({ crypto_payment_status: 'FULLPAID' });
      expect(await ledgerOf(within.transactionId)).toEqual([['credit', 6000000n]]);

      const short = await insertPayinTransaction(db(), merchant, btc);
      const outside = await start(cryptoPayin, short);
      await outside.executeUpdate(depositUpdate, { args: [deposit('out', String(100000000 - 1667))] });
      expect((await outside.result()).status).toBe('FAILED');
      expect((await row(short.transactionId)).details).toMatchObject({ crypto_payment_status: 'UNDERPAID' });
    } finally {
      await setPolicies({ cryptoToleranceFiat: null });
    }
  });

  it('refuses to credit a wallet made inactive during the window and refunds the deposit', async () => {
    const walletId = merchant.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
    const input = await insertPayinTransaction(db(), merchant);
    const handle = await start(cryptoPayin, input);
    await db().update(wallets).set({ status: 'Inactive' }).where(eq(wallets.id, walletId));
    try {
      await handle.executeUpdate(depositUpdate, { args: [deposit('inactive', '100000000')] });
      expect(await handle.result()).toEqual({
        status: 'FAILED',
        message: 'The wallet is inactive. The deposit was refunded.',
      });
      expect(await ledgerOf(input.transactionId)).toEqual([]);
      expect(await depositsOf(input.transactionId)).toEqual([
        expect.objectContaining({ disposition: 'refunded', refundAmount: '100.000000000000000000' }),
      ]);
    } finally {
      await db().update(wallets).set({ status: 'Active' }).where(eq(wallets.id, walletId));
    }
  });
});

describe('payouts whose answers are lost or refused (time-skipping)', () => {
  it('does not book a payout SUCCESS when its confirmation fails: it asks and ends as the processor did', async () => {
    for (const decision of ['approve', 'decline'] as const) {
      const input = await insertPayoutTransaction(db(), ts.config.MASTER_KEY, merchant, {
        pan: '4000000000003220',
      });
      const handle = await start(cardPayout, input);
      const terminal = (await row(input.transactionId)).terminalId!;
      const payoutKey = `${input.transactionId}:payout:${terminal}`;
      confirmFailures.set(payoutKey, 3);
      // Accepted, not completed: the client waits on the result, so the server skips the backoff timers.
      await handle.startUpdate(hostedDecisionUpdate, {
        args: [decision],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      const result = await handle.result();
      const [books] = await db()
        .select()
        .from(sandboxOperations)
        .where(eq(sandboxOperations.idempotencyKey, payoutKey));
      if (decision === 'approve') {
        expect(result.status).toBe('SUCCESS');
        expect(books!.state).toBe('paid');
        expect(await ledgerOf(input.transactionId)).toEqual([
          ['reserve', -500n],
          ['settle', 0n],
        ]);
      } else {
        expect(result).toEqual({ status: 'FAILED', message: 'Payout rejected at verification.' });
        expect(books!.state).toBe('declined');
        expect(await ledgerOf(input.transactionId)).toEqual([
          ['reserve', -500n],
          ['release', 500n],
        ]);
      }
    }
  });

  it('ends a payout whose confirmation answer is lost with the processor real outcome', async () => {
    for (const [decision, status] of [
      ['approve', 'SUCCESS'],
      ['decline', 'FAILED'],
    ] as const) {
      const input = await insertPayoutTransaction(db(), ts.config.MASTER_KEY, merchant, {
        pan: '4000000000003279',
      });
      const handle = await start(cardPayout, input);
      await handle.executeUpdate(hostedDecisionUpdate, { args: [decision] });
      expect((await handle.result()).status).toBe(status);
      const history = JSON.stringify((await handle.fetchHistory()).events);
      expect(history).toContain('lookupPayout');
    }
  });

  it('never cascades a payout whose answer was lost: the first processor paid it', async () => {
    const own = await ts.createMerchant();
    await addTerminal(db(), own.merchant_id, 'test', {
      connector: 'sandbox-payouts',
      kinds: ['payout'],
      priority: 50,
      descriptor: 'SANDBOX*PAYOUT2',
    });
    const input = await insertPayoutTransaction(db(), ts.config.MASTER_KEY, own, { pan: '4000000000003261' });
    const handle = await start(cardPayout, input);
    expect(await handle.result()).toEqual({
      status: 'SUCCESS',
      message: 'Transaction processed successfully.',
    });
    const payouts = await db()
      .select()
      .from(sandboxOperations)
      .where(like(sandboxOperations.idempotencyKey, `${input.transactionId}:%`));
    expect(payouts.map((p) => p.state)).toEqual(['paid']);
    expect(await ledgerOf(input.transactionId)).toEqual([
      ['reserve', -500n],
      ['settle', 0n],
    ]);
  });

  it('blocks a payout from an inactive wallet without touching it', async () => {
    const own = await ts.createMerchant();
    const walletId = own.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
    await db().update(wallets).set({ status: 'Inactive' }).where(eq(wallets.id, walletId));
    const input = await insertPayoutTransaction(db(), ts.config.MASTER_KEY, own, { pan: '4222222222222222' });
    const handle = await start(cardPayout, input);
    expect(await handle.result()).toEqual({ status: 'BLOCKED', message: 'The wallet is inactive.' });
    expect(await ledgerOf(input.transactionId)).toEqual([]);
  });
});

describe('cancellation from the Temporal UI (time-skipping)', () => {
  it('fails a payout waiting for verification with its reserve released and the card purged', async () => {
    const input = await insertPayoutTransaction(db(), ts.config.MASTER_KEY, merchant, {
      pan: '4000000000003220',
      webhookUrl: 'https://merchant.example/hooks',
    });
    const handle = await start(cardPayout, input);
    await handle.cancel();
    expect(await handle.result()).toEqual({ status: 'FAILED', message: 'Cancelled by ops.' });
    expect(await ledgerOf(input.transactionId)).toEqual([
      ['reserve', -500n],
      ['release', 500n],
    ]);
    expect(await row(input.transactionId)).toMatchObject({ status: 'FAILED', message: 'Cancelled by ops.' });
    const [vault] = await db()
      .select()
      .from(cardVault)
      .where(eq(cardVault.transactionId, input.transactionId));
    expect(vault).toMatchObject({ panEnc: null, expiryEnc: null });
    const events = await db()
      .select({ key: webhookEvents.eventKey })
      .from(webhookEvents)
      .where(eq(webhookEvents.transactionId, input.transactionId));
    expect(events).toEqual([{ key: 'status:FAILED' }]);
  });

  it('fails a card payment waiting on its 3DS challenge instead of leaving it REDIRECT', async () => {
    const input = await insertCardTransaction(db(), ts.config.MASTER_KEY, merchant, {
      pan: '4111111111111111',
      webhookUrl: 'https://merchant.example/hooks',
    });
    const handle = await start(cardPayment, input);
    expect((await row(input.transactionId)).status).toBe('REDIRECT');
    await handle.cancel();
    expect(await handle.result()).toEqual({ status: 'FAILED', message: 'Cancelled by ops.' });
    expect(await row(input.transactionId)).toMatchObject({ status: 'FAILED', message: 'Cancelled by ops.' });
    const events = await db()
      .select({ key: webhookEvents.eventKey })
      .from(webhookEvents)
      .where(eq(webhookEvents.transactionId, input.transactionId));
    expect(events).toEqual([{ key: 'status:FAILED' }]);
  });

  it('fails a payin being paid with every received deposit refunded', async () => {
    const input = await insertPayinTransaction(db(), merchant);
    const handle = await start(cryptoPayin, input);
    await handle.executeUpdate(depositUpdate, { args: [deposit('part', '40000000')] });
    await handle.cancel();
    expect(await handle.result()).toEqual({ status: 'FAILED', message: 'Cancelled by ops.' });
    expect(await ledgerOf(input.transactionId)).toEqual([]);
    expect(await depositsOf(input.transactionId)).toEqual([
      expect.objectContaining({ disposition: 'refunded', countedInPayment: true }),
    ]);
    expect(await row(input.transactionId)).toMatchObject({ refunded: true });
  });
});

describe('card authorizations whose answers are lost (time-skipping)', () => {
  it('asks the acquirer and ends SUCCESS, authorized once', async () => {
    const input = await insertCardTransaction(db(), ts.config.MASTER_KEY, merchant, {
      pan: '4000000000000770',
    });
    const handle = await ts.env.client.workflow.start(cardPayment, {
      workflowId: input.transactionId,
      taskQueue: ts.taskQueue,
      args: [input],
    });
    expect(await handle.executeUpdate(firstAnswerUpdate)).toEqual({
      status: 'PENDING',
      message: 'The outcome is being confirmed with the processor.',
    });
    expect(await handle.result()).toEqual({
      status: 'SUCCESS',
      message: 'Transaction processed successfully.',
    });
    const authorizations = await db()
      .select()
      .from(sandboxOperations)
      .where(like(sandboxOperations.idempotencyKey, `${input.transactionId}:%`));
    expect(authorizations.map((a) => a.state)).toEqual(['approved']);
  });
});
