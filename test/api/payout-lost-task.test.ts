import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asc, eq, inArray, sql } from 'drizzle-orm';
import { activityEnvironment } from '../helpers/mock-activity';
import { eventually } from '../helpers/eventually';
import { holdRowLocks } from '../helpers/row-locks';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { startWithStopWaiting } from '../helpers/update-admitted';
import { insertPayoutTransaction } from '../helpers/fixtures';
import { faultyConnectors, type FaultPlan } from '../helpers/faulty-connectors';
import { activitiesOutsideAnyRun } from '../../activities/index';
import type { PayoutProcessor } from '../../activities/connectors/types';
import { createMerchant, type MerchantCredentials } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';
import {
  cardVault,
  ledgerEntries,
  sandboxOperations,
  terminals,
  transactions,
  wallets,
} from '../../src/db/schema/index';
import {
  SEND_DEADLINE_MS,
  SEND_NOTED_WITHIN_MS,
  connectorKeys,
  failureTypes,
  forceFailUpdate,
  stateQuery,
  workflowIds,
  type CardPayoutInput,
} from '../../src/contracts';
import { cardPayout } from '../../workflows/card-payout';

/**
 * A payout sends inside its first workflow task (a local activity). A task that is lost (a worker crash)
 * leaves no record of its send in the history, and its retry runs again, possibly down another path: a
 * stop arrived, the wallet was deactivated, the terminal that paid was deactivated. Each test recreates
 * what such a lost task leaves behind (the send noted on the card's vault row, the funds reserved, the
 * processor's payout, the settle), then lets the retry run: the payout is neither failed while paid nor
 * paid twice, and a lost attempt still running after the payout ended sends nothing.
 */
let env: TestEnv;
let merchant: MerchantCredentials;
/** The merchant's payout terminals in test mode, by priority. */
let payoutTerminals: string[] = [];
/** Per transaction, the faults of its processor's answers. */
const plans = new Map<string, FaultPlan>();
/** The deadline each payout key was last sent with. */
const deadlines = new Map<string, number>();

/** The sandbox processor with the faults `plans` sets, on the test environment's database. */
const processor: PayoutProcessor = {
  send: (request) => {
    deadlines.set(request.idempotencyKey, request.deadline.getTime());
    return faultyConnectors(env.database.db, plans).payout.send(request);
  },
  confirm: (request) => faultyConnectors(env.database.db, plans).payout.confirm(request),
  lookup: (request) => faultyConnectors(env.database.db, plans).payout.lookup(request),
};

beforeAll(async () => {
  env = await startTestEnv({}, { payoutConnectors: { 'sandbox-payouts': processor } });
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

/**
 * Sends `input` through the terminal the way a lost task did: the key noted, reserved, sent, settled, or
 * cut short after `crashAfter`. `taskStartedAt`: when that task started (now by default); `notProcessed`:
 * the keys its workflow knew were refused.
 */
function sendAsLostTask(
  input: CardPayoutInput,
  {
    terminalId = payoutTerminals[0]!,
    taskStartedAt = Date.now(),
    crashAfter = '',
    notProcessed = [] as string[],
  } = {},
) {
  const activities = activitiesOutsideAnyRun({
    db: env.database.db,
    config: env.config,
    payoutConnectors: { 'sandbox-payouts': processor },
    afterPayoutStep: (step) => {
      if (step === crashAfter) throw new Error(`the worker is lost after ${step}`);
    },
  });
  return activityEnvironment({ startToCloseTimeoutMs: 30_000 }).run(activities.reserveAndSendPayout, {
    transactionId: input.transactionId,
    payoutKey: connectorKeys.payout(input.transactionId, terminalId),
    mode: input.mode,
    connector: 'sandbox-payouts',
    amountMinor: input.amountMinor,
    currency: input.currency,
    funds: { walletId: input.walletId, amountMinor: input.amountMinor },
    inTheTask: { notProcessed, taskStartedAt },
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

/** Starts the payout with a stop already waiting for its first workflow task; answers the stop's answer. */
async function startStopped(input: CardPayoutInput) {
  return (await startWithStopWaiting(env, 'cardPayout', input)).stop;
}

/** Runs `body` with the terminals deactivated, and activates them again after it. */
async function withTerminalsInactive<T>(ids: string[], body: () => Promise<T>): Promise<T> {
  const set = (active: boolean) =>
    env.database.db.update(terminals).set({ active }).where(inArray(terminals.id, ids));
  await set(false);
  try {
    return await body();
  } finally {
    await set(true);
  }
}

/** Runs `body` with the wallet inactive, and activates it again after it. */
async function withWalletInactive<T>(walletId: string, body: () => Promise<T>): Promise<T> {
  const set = (status: 'Active' | 'Inactive') =>
    env.database.db.update(wallets).set({ status }).where(eq(wallets.id, walletId));
  await set('Inactive');
  try {
    return await body();
  } finally {
    await set('Active');
  }
}

/** The keys noted as sent on the payout's vault row (which every payout here has). */
async function keysNoted(input: CardPayoutInput) {
  const [vault] = await env.database.db
    .select({ sent: cardVault.authorizationsSent })
    .from(cardVault)
    .where(eq(cardVault.transactionId, input.transactionId));
  return vault!.sent;
}

async function availableIn(walletId: string) {
  const [wallet] = await env.database.db.select().from(wallets).where(eq(wallets.id, walletId));
  return wallet!.available;
}

/** Whether a statement starting with one of `starts` waits on a lock. */
async function waitingOn(starts: string[]) {
  const { rows } = await env.database.pool.query<{ query: string }>(
    `select query from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
  );
  return rows.some((row) => starts.some((start) => row.query.startsWith(start)));
}

/** Expects the payout paid once, through the terminal, and the wallet debited once. */
async function paidOnceThrough(input: CardPayoutInput, terminalId = payoutTerminals[0]!) {
  expect(await payoutsOf(input.transactionId)).toEqual([
    { key: connectorKeys.payout(input.transactionId, terminalId), state: 'paid' },
  ]);
  expect(await ledgerOf(input.transactionId)).toEqual(paidOnce);
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
    await paidOnceThrough(input);
  });

  it('settles the payout it sent when the wallet is deactivated meanwhile, instead of blocking it', async () => {
    const input = await newPayout();
    await sendAsLostTask(input);
    const result = await withWalletInactive(input.walletId, async () => (await startPayout(input)).result());
    expect(result).toEqual({ status: 'SUCCESS', message: 'Transaction processed successfully.' });
    await paidOnceThrough(input);
  });

  it('does not pay through the next terminal when the one the lost task paid through is deactivated', async () => {
    const input = await newPayout();
    const [first] = payoutTerminals;
    await sendAsLostTask(input, { terminalId: first });
    const result = await withTerminalsInactive([first!], async () => (await startPayout(input)).result());
    expect(result.status).toBe('SUCCESS');
    // The payout is the one the lost task made, at the terminal that made it: never a second one.
    expect(await rowOf(input.transactionId)).toMatchObject({ status: 'SUCCESS', terminalId: first });
    await paidOnceThrough(input, first);
  });

  it('asks, instead of moving on, when its resend of the key the lost task paid is refused', async () => {
    const input = await newPayout();
    // The lost task sent and the processor paid; the task was lost before it settled.
    await expect(sendAsLostTask(input, { crashAfter: 'sent' })).rejects.toThrow('the worker is lost');
    // The retry's send of the same key is refused (the processor is busy for a moment): not definite, as
    // the key was sent before. Taken as definite, the payout would go to the next terminal and pay twice.
    plans.set(input.transactionId, { send: ['refuse'] });
    const result = await (await startPayout(input)).result();
    expect(result.status).toBe('SUCCESS');
    await paidOnceThrough(input);
  });

  it('keeps the payout a lost attempt of a later round paid, when a stop ends it after a refused round', async () => {
    const input = await newPayout();
    const [first, second] = payoutTerminals;
    const keys = [first!, second!].map((terminal) => connectorKeys.payout(input.transactionId, terminal));
    // The first round: both terminals refuse (certainly not processed); the payout waits out its backoff.
    plans.set(input.transactionId, { send: ['refuse', 'refuse'] });
    const handle = await startPayout(input);
    await eventually('the backoff after the refused round', async () =>
      (await handle.query(stateQuery)).waitingFor === 'retry' ? true : undefined,
    );
    // A later round's task sent the first key again, the processor paid it, and the task was lost.
    await expect(sendAsLostTask(input, { terminalId: first, notProcessed: keys })).resolves.toMatchObject({
      outcome: 'paid',
    });
    // Ops stop the payout: its ending asks about the refused keys too, and finds the payout paid.
    const stopped = await handle.executeUpdate(forceFailUpdate, {
      args: [{ reason: 'Stopped by ops.', actor: 'ops' }],
      updateId: 'stop',
    });
    expect(stopped).toEqual({ status: 'SUCCESS', message: 'Transaction processed successfully.' });
    expect(await rowOf(input.transactionId)).toMatchObject({ status: 'SUCCESS', terminalId: first });
    await paidOnceThrough(input, first);
  });

  it('settles the payout it sent when every payout terminal is deactivated meanwhile', async () => {
    const input = await newPayout();
    await sendAsLostTask(input);
    const result = await withTerminalsInactive(payoutTerminals, async () =>
      (await startPayout(input)).result(),
    );
    expect(result).toEqual({ status: 'SUCCESS', message: 'Transaction processed successfully.' });
    await paidOnceThrough(input);
  });
});

describe('a payout that ended without a send of its own', () => {
  /** Expects a lost attempt running now to be refused, having noted, reserved and sent nothing. */
  async function nothingSentAfter(input: CardPayoutInput) {
    const before = await availableIn(input.walletId);
    await expect(sendAsLostTask(input)).rejects.toThrow('The payout ended before it was sent.');
    expect(await payoutsOf(input.transactionId)).toEqual([]);
    expect(await ledgerOf(input.transactionId)).toEqual([]);
    expect(await availableIn(input.walletId)).toBe(before);
  }

  it('sends nothing from a lost attempt that runs after a stop', async () => {
    const input = await newPayout();
    expect(await startStopped(input)).toEqual({ status: 'FAILED', message: 'Stopped by ops.' });
    await nothingSentAfter(input);
  });

  it('sends nothing from a lost attempt that runs after it found no terminal', async () => {
    const input = await newPayout();
    const result = await withTerminalsInactive(payoutTerminals, async () =>
      (await startPayout(input)).result(),
    );
    expect(result).toEqual({ status: 'FAILED', message: 'No terminal is available for this transaction.' });
    await nothingSentAfter(input);
  });

  // A lost attempt held up on the wallet row while its payout ends without a send of its own: whichever
  // of its reserve and the ending's close of the sends comes first, nothing stays reserved on the ended
  // payout. Each takes about half a minute: the ending asks about the noted key until a send of it can no
  // longer land (SEND_LANDS_WITHIN_MS).
  it.each([
    {
      // Locked for update: the reserve waits in its entry's check of the wallet, before its guard.
      holds: 'for update',
      lock: (walletId: string) => sql`select 1 from ${wallets} where ${wallets.id} = ${walletId} for update`,
      what: 'reserves nothing once the ending has closed the sends',
      refused: 'The payout ended before it was sent.',
      ledger: [],
    },
    {
      // Another payout's reserve updating it: the reserve waits in its own update, its guard already holding
      // the vault row, so the ending's close waits for it and the ending gives the funds back.
      holds: 'an update',
      lock: (walletId: string) =>
        sql`update ${wallets} set available = available where ${wallets.id} = ${walletId}`,
      what: 'gives back what it reserved before the ending closed the sends',
      refused: 'its attempt ran late',
      ledger: [
        { step: 'reserve', amount: -300n },
        { step: 'release', amount: 300n },
      ],
    },
  ])(
    '$what, held up on the wallet row ($holds)',
    async ({ lock, refused, ledger }) => {
      const input = await newPayout();
      const key = connectorKeys.payout(input.transactionId, payoutTerminals[0]!);
      const before = await availableIn(input.walletId);
      const held = await holdRowLocks(env.database.db, lock(input.walletId));
      // A lost task's attempt, within the note's bound: it notes its key, then waits on the wallet row.
      const taskStartedAt = Date.now() - SEND_NOTED_WITHIN_MS + 1_000;
      const attempt = sendAsLostTask(input, { taskStartedAt });
      attempt.catch(() => undefined);
      await eventually('the key noted', async () =>
        (await keysNoted(input)).includes(key) ? true : undefined,
      );
      await eventually('the reserve waiting on the wallet row', async () =>
        (await waitingOn(['insert into "ledger_entries"', 'update "wallets"'])) ? true : undefined,
      );
      // The retry meets a stop: it closes the sends, asks about the key, and ends.
      const stopped = startStopped(input);
      // The hold ends once the payout has ended, or its close waits on the attempt, and the attempt's send
      // window has passed (so it sends nothing either way).
      for (let waited = 0; ; waited += 200) {
        const late = Date.now() > taskStartedAt + SEND_DEADLINE_MS / 2 + 500;
        const ended = (await rowOf(input.transactionId)).status === 'FAILED';
        if (late && (ended || (await waitingOn(['update "card_vault"'])))) break;
        if (waited > 60_000) throw new Error('the payout neither ended nor closed its sends');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await held.release();
      await expect(attempt).rejects.toThrow(refused);
      expect(await stopped).toEqual({ status: 'FAILED', message: 'Stopped by ops.' });
      expect(await payoutsOf(input.transactionId)).toEqual([]);
      expect(await ledgerOf(input.transactionId)).toEqual(ledger);
      expect(await availableIn(input.walletId)).toBe(before);
    },
    120_000,
  );

  it('sends nothing from a lost attempt of its key that runs after it failed for want of funds', async () => {
    const input = await newPayout();
    const key = connectorKeys.payout(input.transactionId, payoutTerminals[0]!);
    // A lost task's attempt noted the key, then was held up before its reserve.
    await env.database.db
      .update(cardVault)
      .set({ authorizationsSent: [key] })
      .where(eq(cardVault.transactionId, input.transactionId));
    // The retry sends the same key; its reserve is refused, as the wallet holds too little for now.
    const held = await availableIn(input.walletId);
    const setAvailable = (available: bigint) =>
      env.database.db.update(wallets).set({ available }).where(eq(wallets.id, input.walletId));
    await setAvailable(100n);
    try {
      expect(await (await startPayout(input)).result()).toEqual({
        status: 'FAILED',
        message: 'Insufficient funds.',
      });
    } finally {
      await setAvailable(held);
    }
    // Funds are back; the held-up attempt goes on: closed, it reserves and sends nothing.
    await nothingSentAfter(input);
  });

  it('sends nothing from a lost attempt that runs after it found the wallet inactive', async () => {
    const input = await newPayout();
    const result = await withWalletInactive(input.walletId, async () => (await startPayout(input)).result());
    expect(result).toEqual({ status: 'BLOCKED', message: 'The wallet is inactive.' });
    await nothingSentAfter(input);
  });
});

describe("a payout's send inside a workflow task", () => {
  it('notes nothing once the task is older than a retry of it may be', async () => {
    const input = await newPayout();
    const taskStartedAt = Date.now() - SEND_NOTED_WITHIN_MS - 1_000;
    await expect(sendAsLostTask(input, { taskStartedAt })).rejects.toThrow('its attempt ran late');
    expect(await keysNoted(input)).toEqual([]);
    expect(await ledgerOf(input.transactionId)).toEqual([]);
  });

  it('takes no refusal of a key noted before as definite, even one its workflow knew was refused', async () => {
    const input = await newPayout();
    const key = connectorKeys.payout(input.transactionId, payoutTerminals[0]!);
    // A later round: the key was refused in the first (so the workflow counts it as not processed), then
    // sent again by a task that was lost after the processor paid it.
    await expect(sendAsLostTask(input, { crashAfter: 'sent', notProcessed: [key] })).rejects.toThrow(
      'the worker is lost',
    );
    // The retry's resend is refused: the processor's word on this send, not on the lost one.
    plans.set(input.transactionId, { send: ['refuse'] });
    await expect(sendAsLostTask(input, { notProcessed: [key] })).rejects.toMatchObject({
      type: failureTypes.outcomeUnknown,
    });
    expect(await payoutsOf(input.transactionId)).toEqual([{ key, state: 'paid' }]);
  });

  it("gives the processor a deadline counted from the task's start, not from the send", async () => {
    const input = await newPayout();
    const taskStartedAt = Date.now() - 3_000;
    await sendAsLostTask(input, { taskStartedAt });
    const key = connectorKeys.payout(input.transactionId, payoutTerminals[0]!);
    expect(deadlines.get(key)).toBe(taskStartedAt + SEND_DEADLINE_MS);
  });
});
