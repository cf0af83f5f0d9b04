import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asc, eq } from 'drizzle-orm';
import proto from '@temporalio/proto';
import { activityEnvironment } from '../helpers/mock-activity';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { insertPayoutTransaction } from '../helpers/fixtures';
import { activitiesOutsideAnyRun } from '../../activities/index';
import { createMerchant, type MerchantCredentials } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';
import {
  ledgerEntries,
  sandboxOperations,
  terminals,
  transactions,
  wallets,
} from '../../src/db/schema/index';
import { connectorKeys, forceFailUpdate, workflowIds, type CardPayoutInput } from '../../src/contracts';
import { cardPayout } from '../../workflows/card-payout';

/**
 * A payout sends inside its first workflow task (a local activity). A task that is lost (a worker crash)
 * leaves no record of its send in the history, and its retry runs again, possibly down another path: a
 * stop arrived, the wallet was deactivated, the terminal that paid was deactivated. Each test recreates
 * what such a lost task leaves behind (the send noted on the card's vault row, the funds reserved, the
 * processor's payout, the settle), then lets the retry run: the payout is neither failed while paid nor
 * paid twice, and a lost attempt still running after a stop sends nothing.
 */
const { temporal } = proto;
let env: TestEnv;
let merchant: MerchantCredentials;
/** The merchant's payout terminals in test mode, by priority. */
let payoutTerminals: string[] = [];

beforeAll(async () => {
  env = await startTestEnv();
  merchant = await createMerchant(env.database.db, env.config.MASTER_KEY, {
    name: 'Two payout terminals',
    wallets: [{ currency: 'USD', amount: 100_000n }],
    terminals: [
      ...SANDBOX_TERMINALS,
      { connector: 'sandbox-payouts', kinds: ['payout'], priority: 50, descriptor: 'SANDBOX*P2' },
    ],
  });
  payoutTerminals = merchant.terminals
    .filter((t) => t.mode === 'test' && t.kinds.includes('payout'))
    .sort((a, b) => a.priority - b.priority)
    .map((t) => t.terminal_id);
});
afterAll(() => env?.close());

const newPayout = () =>
  insertPayoutTransaction(env.database.db, env.config.MASTER_KEY, merchant, {
    pan: '4222222222222222',
    amountMinor: 300n,
  });

/** Sends `input` through the terminal the way a lost task did: the key noted, reserved, sent, settled. */
function sendAsLostTask(input: CardPayoutInput, terminalId = payoutTerminals[0]!) {
  const activities = activitiesOutsideAnyRun({ db: env.database.db, config: env.config });
  return activityEnvironment({ startToCloseTimeoutMs: 30_000 }).run(activities.reserveAndSendPayout, {
    transactionId: input.transactionId,
    payoutKey: connectorKeys.payout(input.transactionId, terminalId),
    mode: input.mode,
    connector: 'sandbox-payouts',
    amountMinor: input.amountMinor,
    currency: input.currency,
    funds: { walletId: input.walletId, amountMinor: input.amountMinor },
    notProcessed: [],
  });
}

const startPayout = (input: CardPayoutInput) =>
  env.client.workflow.start(cardPayout, {
    workflowId: workflowIds.transaction(input.transactionId),
    taskQueue: env.config.TEMPORAL_TASK_QUEUE,
    args: [input],
  });

const payoutsOf = (transactionId: string) =>
  env.database.db
    .select({ key: sandboxOperations.idempotencyKey, state: sandboxOperations.state })
    .from(sandboxOperations)
    .where(eq(sandboxOperations.transactionId, transactionId));

const ledgerOf = (transactionId: string) =>
  env.database.db
    .select({ step: ledgerEntries.step, amount: ledgerEntries.amount })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.reference, transactionId))
    .orderBy(asc(ledgerEntries.id));

async function rowOf(transactionId: string) {
  const [row] = await env.database.db.select().from(transactions).where(eq(transactions.id, transactionId));
  return row!;
}

/** Waits until the server holds the update, so the first workflow task is sure to carry it. */
async function admitted(workflowId: string, updateId: string): Promise<void> {
  for (;;) {
    try {
      await env.client.workflowService.pollWorkflowExecutionUpdate({
        namespace: env.client.options.namespace,
        updateRef: { workflowExecution: { workflowId }, updateId },
        waitPolicy: {
          lifecycleStage:
            temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage
              .UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED,
        },
      });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Starts the payout with a stop already waiting for its first workflow task; answers the stop's answer. */
async function startStopped(input: CardPayoutInput) {
  await env.stopWorker();
  try {
    const handle = await startPayout(input);
    const stop = handle.executeUpdate(forceFailUpdate, {
      args: [{ reason: 'Stopped by ops.', actor: 'ops' }],
      updateId: 'stop',
    });
    await admitted(handle.workflowId, 'stop');
    return stop;
  } finally {
    await env.startWorker();
  }
}

const paidOnce = [
  { step: 'reserve', amount: -300n },
  { step: 'settle', amount: 0n },
];

describe('a payout workflow task lost after its send', () => {
  it('keeps the payout when the retry meets a stop request first', async () => {
    const input = await newPayout();
    await expect(sendAsLostTask(input)).resolves.toMatchObject({ outcome: 'paid', settled: true });

    expect(await startStopped(input)).toEqual({
      status: 'SUCCESS',
      message: 'Transaction processed successfully.',
    });
    expect(await rowOf(input.transactionId)).toMatchObject({
      status: 'SUCCESS',
      terminalId: payoutTerminals[0],
    });
    expect(await payoutsOf(input.transactionId)).toEqual([
      { key: connectorKeys.payout(input.transactionId, payoutTerminals[0]!), state: 'paid' },
    ]);
    expect(await ledgerOf(input.transactionId)).toEqual(paidOnce);
  });

  it('settles the payout it sent when the wallet is deactivated meanwhile, instead of blocking it', async () => {
    const input = await newPayout();
    await sendAsLostTask(input);
    await env.database.db.update(wallets).set({ status: 'Inactive' }).where(eq(wallets.id, input.walletId));
    try {
      const result = await (await startPayout(input)).result();
      expect(result).toEqual({ status: 'SUCCESS', message: 'Transaction processed successfully.' });
      expect(await payoutsOf(input.transactionId)).toHaveLength(1);
      expect(await ledgerOf(input.transactionId)).toEqual(paidOnce);
    } finally {
      await env.database.db.update(wallets).set({ status: 'Active' }).where(eq(wallets.id, input.walletId));
    }
  });

  it('does not pay through the next terminal when the one the lost task paid through is deactivated', async () => {
    const input = await newPayout();
    const [first] = payoutTerminals;
    await sendAsLostTask(input, first);
    await env.database.db.update(terminals).set({ active: false }).where(eq(terminals.id, first!));
    try {
      const result = await (await startPayout(input)).result();
      expect(result.status).toBe('SUCCESS');
      // The payout is the one the lost task made, at the terminal that made it: never a second one.
      expect(await rowOf(input.transactionId)).toMatchObject({ status: 'SUCCESS', terminalId: first });
      expect(await payoutsOf(input.transactionId)).toEqual([
        { key: connectorKeys.payout(input.transactionId, first!), state: 'paid' },
      ]);
      expect(await ledgerOf(input.transactionId)).toEqual(paidOnce);
    } finally {
      await env.database.db.update(terminals).set({ active: true }).where(eq(terminals.id, first!));
    }
  });
});

describe('a payout stopped before it was sent', () => {
  it('sends nothing from a lost attempt that runs after the stop', async () => {
    const input = await newPayout();
    const [wallet] = await env.database.db.select().from(wallets).where(eq(wallets.id, input.walletId));

    expect(await startStopped(input)).toEqual({ status: 'FAILED', message: 'Stopped by ops.' });
    // A lost attempt of the first task, held up until now, tries to send: the stop closed the sends.
    await expect(sendAsLostTask(input)).rejects.toThrow('The payout was stopped before it was sent.');
    expect(await payoutsOf(input.transactionId)).toEqual([]);
    expect(await ledgerOf(input.transactionId)).toEqual([]);
    const [after] = await env.database.db.select().from(wallets).where(eq(wallets.id, input.walletId));
    expect(after!.available).toBe(wallet!.available);
  });
});
