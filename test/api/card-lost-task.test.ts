import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, inArray, like, sql } from 'drizzle-orm';
import { activityEnvironment } from '../helpers/mock-activity';
import { holdRowLocks } from '../helpers/row-locks';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { startWithStopWaiting } from '../helpers/update-admitted';
import { insertCardTransaction } from '../helpers/fixtures';
import { faultyConnectors, type FaultPlan } from '../helpers/faulty-connectors';
import { activitiesOutsideAnyRun } from '../../activities/index';
import type { CardAcquirer } from '../../activities/connectors/types';
import { cardVault, sandboxOperations, terminals, transactions } from '../../src/db/schema/index';
import {
  SEND_DEADLINE_MS,
  SEND_NOTED_WITHIN_MS,
  connectorKeys,
  failureTypes,
  workflowIds,
  type CardPaymentInput,
} from '../../src/contracts';
import type { MerchantCredentials } from '../../src/merchants/accounts';
import { cardPayment } from '../../workflows/card-payment';

/**
 * Card connector calls run as local activities, inside the workflow task. A task that is lost (a worker
 * crash) leaves no record of the calls it made, and its retry runs them again, possibly down another path.
 * Each test recreates what such a lost task leaves behind (an authorization at the acquirer, the card's
 * vault row marked as sent, maybe the card purged), then lets the retry run: the acquirer is asked, and
 * the payment neither fails while charged nor is charged twice.
 */
let env: TestEnv;
let merchant: MerchantCredentials;
const plans = new Map<string, FaultPlan>();

/** The sandbox acquirer with the faults `plans` sets, on the test environment's database. */
const faulty = () => faultyConnectors(env.database.db, plans).card;
/** The deadline each authorization key was last sent with. */
const deadlines = new Map<string, number>();
const acquirer: CardAcquirer = {
  authorize: (request) => {
    deadlines.set(request.idempotencyKey, request.deadline.getTime());
    return faulty().authorize(request);
  },
  completeChallenge: (request) => faulty().completeChallenge(request),
  lookup: (request) => faulty().lookup(request),
  refund: (request) => faulty().refund(request),
  cancel: (request) => faulty().cancel(request),
};

/** Per transaction, how long its worker's next authorization attempts are held up before they start. */
const heldUp = new Map<string, number[]>();
/** Per transaction, how long its run's first step (the binding) is held up. */
const bindingHeldUp = new Map<string, number[]>();
const holdUp = async (plans: Map<string, number[]>, transactionId: string) => {
  const delay = plans.get(transactionId)?.shift();
  if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
};

beforeAll(async () => {
  env = await startTestEnv(
    {},
    {
      cardConnectors: { 'sandbox-acquirer': acquirer },
      // A stalled worker or a slow database: the attempt starts late within its workflow task.
      wrap: (real) => ({
        authorizeCard: async (input) => {
          await holdUp(heldUp, input.transactionId);
          return real.authorizeCard(input);
        },
        bindRun: async (args) => {
          await holdUp(bindingHeldUp, (args.input as { transactionId?: string }).transactionId ?? '');
          return real.bindRun(args);
        },
      }),
    },
  );
  merchant = await env.createMerchant();
});
afterAll(() => env?.close());

/** The activities a lost workflow task would have run, on the test's database and connectors. */
const lostTask = () =>
  activitiesOutsideAnyRun({
    db: env.database.db,
    config: env.config,
    cardConnectors: { 'sandbox-acquirer': acquirer },
  });

/**
 * Runs the authorization of `input` the way the lost task did, at the merchant's terminal of that rank
 * (the first by default) after the ones before it refused (`notProcessed`: their keys); answers the
 * terminal, or undefined when the acquirer refused the call.
 */
async function authorizeAsLostTask(
  input: CardPaymentInput,
  rank = 0,
  notProcessed: string[] = [],
  taskStartedAt = Date.now(),
  notedWithinMs = SEND_NOTED_WITHIN_MS,
): Promise<string | undefined> {
  const activities = lostTask();
  const terminal = (
    await activities.listTerminals({
      merchantId: input.merchantId,
      mode: input.mode,
      kind: 'card',
      terminalId: input.terminalId,
    })
  )[rank]!;
  // The local activity's own timeout, which the acquirer's deadline keeps inside.
  const refused = await activityEnvironment({ startToCloseTimeoutMs: 30_000 })
    .run(activities.authorizeCard, {
      transactionId: input.transactionId,
      authorizationKey: connectorKeys.authorization(input.transactionId, terminal.terminalId),
      mode: input.mode,
      connector: terminal.connector,
      terminalId: terminal.terminalId,
      terminalRank: rank,
      amountMinor: input.amountMinor,
      currency: input.currency,
      notProcessed,
      inTheTask: { taskStartedAt, notedWithinMs },
    })
    .then(
      () => false,
      (error: unknown) => {
        if ((error as { type?: string }).type !== failureTypes.notProcessed) throw error;
        return true;
      },
    );
  return refused ? undefined : terminal.terminalId;
}

const approvedAuthorizationsOf = async (transactionId: string) =>
  (await authorizationsOf(transactionId)).filter((row) => row.state === 'approved');

const authorizationsOf = (transactionId: string) =>
  env.database.db
    .select()
    .from(sandboxOperations)
    .where(
      and(
        like(sandboxOperations.idempotencyKey, `${transactionId}:%`),
        eq(sandboxOperations.operation, 'authorization'),
      ),
    );

/** Runs the card payment's workflow to its end (the retry of a lost task, in these tests). */
const runPayment = (input: CardPaymentInput) =>
  env.client.workflow.execute(cardPayment, {
    workflowId: workflowIds.transaction(input.transactionId),
    taskQueue: env.config.TEMPORAL_TASK_QUEUE,
    args: [input],
  });

/** The authorization keys noted with the transaction's card. */
async function keysNotedFor(transactionId: string) {
  const [vault] = await env.database.db
    .select({ sent: cardVault.authorizationsSent })
    .from(cardVault)
    .where(eq(cardVault.transactionId, transactionId));
  return vault!.sent;
}

async function rowOf(transactionId: string) {
  const [row] = await env.database.db.select().from(transactions).where(eq(transactions.id, transactionId));
  return row!;
}

/**
 * Runs a card payment whose first step (the binding) is held up `ms`; answers the deadline its
 * authorization was sent with and when its first workflow task started.
 */
async function paymentWithBindingHeldUp(ms: number) {
  const input = await insertCardTransaction(env.database.db, env.config.MASTER_KEY, merchant, {
    pan: '4242424242424242',
  });
  bindingHeldUp.set(input.transactionId, [ms]);
  const handle = await env.client.workflow.start(cardPayment, {
    workflowId: workflowIds.transaction(input.transactionId),
    taskQueue: env.config.TEMPORAL_TASK_QUEUE,
    args: [input],
  });
  expect((await handle.result()).status).toBe('SUCCESS');
  const { events } = await handle.fetchHistory();
  const started = events!.find((event) => event.workflowTaskStartedEventAttributes)!.eventTime!;
  const startedAt = Number(started.seconds) * 1000 + Math.floor((started.nanos ?? 0) / 1e6);
  const { terminalId } = await rowOf(input.transactionId);
  const deadline = deadlines.get(connectorKeys.authorization(input.transactionId, terminalId!))!;
  return { deadline, startedAt };
}

describe('a card workflow task lost after its connector call', () => {
  it('keeps the authorization when the retry meets a stop request first', async () => {
    await env.stopWorker();
    const input = await insertCardTransaction(env.database.db, env.config.MASTER_KEY, merchant, {
      pan: '4242424242424242',
    });
    const terminalId = await authorizeAsLostTask(input);
    // An ops stop arrives before any task of the workflow completes: the server holds it for the first.
    const { stop } = await startWithStopWaiting(env, 'cardPayment', input);

    expect(await stop).toEqual({ status: 'SUCCESS', message: 'Transaction processed successfully.' });
    expect(await rowOf(input.transactionId)).toMatchObject({ status: 'SUCCESS', terminalId });
    expect(await authorizationsOf(input.transactionId)).toHaveLength(1);
  });

  it('lets only one of two attempts running at once send, when they route to different terminals', async () => {
    // A lost task's attempt and its retry, each at a terminal of its own: the note of one key refuses
    // while the other's is there, in one statement, so the two can never both pass it. Five payments, as
    // the two attempts' order varies.
    for (let run = 0; run < 5; run++) {
      const input = await insertCardTransaction(env.database.db, env.config.MASTER_KEY, merchant, {
        pan: '4242424242424242',
      });
      await Promise.all([authorizeAsLostTask(input, 0), authorizeAsLostTask(input, 1)]);
      expect(await authorizationsOf(input.transactionId)).toHaveLength(1);
    }
  });

  it('asks about a repeated send the acquirer refuses instead of cascading to the next terminal', async () => {
    const input = await insertCardTransaction(env.database.db, env.config.MASTER_KEY, merchant, {
      pan: '4242424242424242',
    });
    const terminalId = await authorizeAsLostTask(input);
    // The retry's send is refused (the acquirer is unreachable for a moment): not definite, since the
    // lost task's send of the same key went through.
    plans.set(input.transactionId, { authorize: ['refuse'] });
    const result = await runPayment(input);

    expect(result.status).toBe('SUCCESS');
    expect(await rowOf(input.transactionId)).toMatchObject({ status: 'SUCCESS', terminalId });
    expect(await authorizationsOf(input.transactionId)).toHaveLength(1);
  });

  it('asks the acquirer when the lost task purged the card after authorizing', async () => {
    const input = await insertCardTransaction(env.database.db, env.config.MASTER_KEY, merchant, {
      pan: '4242424242424242',
    });
    const terminalId = await authorizeAsLostTask(input);
    await lostTask().purgeCardData({ transactionId: input.transactionId });
    const result = await runPayment(input);

    expect(result).toEqual({ status: 'SUCCESS', message: 'Transaction processed successfully.' });
    expect(await rowOf(input.transactionId)).toMatchObject({ status: 'SUCCESS', terminalId });
    expect(await authorizationsOf(input.transactionId)).toHaveLength(1);
  });

  it('does not charge the next terminal when the one the lost task charged is deactivated meanwhile', async () => {
    const input = await insertCardTransaction(env.database.db, env.config.MASTER_KEY, merchant, {
      pan: '4242424242424242',
    });
    const primary = (await authorizeAsLostTask(input))!;
    await env.database.db.update(terminals).set({ active: false }).where(eq(terminals.id, primary));
    try {
      const result = await runPayment(input);
      expect(result.status).toBe('SUCCESS');
      // The payment is the one the lost task made, at the terminal that made it: never a second one.
      expect(await rowOf(input.transactionId)).toMatchObject({ status: 'SUCCESS', terminalId: primary });
      expect(await approvedAuthorizationsOf(input.transactionId)).toHaveLength(1);
      expect(await authorizationsOf(input.transactionId)).toHaveLength(1);
    } finally {
      await env.database.db.update(terminals).set({ active: true }).where(eq(terminals.id, primary));
    }
  });

  it('does not charge the first terminal again when it refused the lost task, which then charged the next', async () => {
    const input = await insertCardTransaction(env.database.db, env.config.MASTER_KEY, merchant, {
      pan: '4242424242424242',
    });
    // The lost task: the first terminal refused outright, the second approved.
    plans.set(input.transactionId, { authorize: ['refuse'] });
    expect(await authorizeAsLostTask(input, 0)).toBeUndefined();
    const [first] = await lostTask().listTerminals({
      merchantId: input.merchantId,
      mode: 'test',
      kind: 'card',
    });
    const second = (await authorizeAsLostTask(input, 1, [
      connectorKeys.authorization(input.transactionId, first!.terminalId),
    ]))!;
    // The retry routes from the first terminal again, which would take the card now.
    const result = await runPayment(input);
    expect(result.status).toBe('SUCCESS');
    expect(await rowOf(input.transactionId)).toMatchObject({ status: 'SUCCESS', terminalId: second });
    const approved = await approvedAuthorizationsOf(input.transactionId);
    expect(approved.map((row) => row.idempotencyKey)).toEqual([
      connectorKeys.authorization(input.transactionId, second),
    ]);
  });
});

describe('a card payment that ends without an authorization of its own', () => {
  it('keeps what the lost task authorized when the retry finds no terminal', async () => {
    const input = await insertCardTransaction(env.database.db, env.config.MASTER_KEY, merchant, {
      pan: '4242424242424242',
    });
    const terminalId = (await authorizeAsLostTask(input))!;
    // Ops deactivate every card terminal before the retry lists them: the payment is the lost task's.
    const cardTerminals = (
      await lostTask().listTerminals({ merchantId: input.merchantId, mode: 'test', kind: 'card' })
    ).map((terminal) => terminal.terminalId);
    const setActive = (active: boolean) =>
      env.database.db.update(terminals).set({ active }).where(inArray(terminals.id, cardTerminals));
    await setActive(false);
    try {
      const result = await runPayment(input);
      expect(result).toEqual({ status: 'SUCCESS', message: 'Transaction processed successfully.' });
      expect(await rowOf(input.transactionId)).toMatchObject({ status: 'SUCCESS', terminalId });
      expect(await authorizationsOf(input.transactionId)).toHaveLength(1);
    } finally {
      await setActive(true);
    }
    // Its authorizations are closed: an attempt still running from a lost task notes nothing now.
    const [vault] = await env.database.db
      .select({ closed: cardVault.sendsClosedAt })
      .from(cardVault)
      .where(eq(cardVault.transactionId, input.transactionId));
    expect(vault!.closed).not.toBeNull();
  });
});

describe('a card authorization inside a workflow task', () => {
  it('notes and sends nothing once the task is older than a retry of it may be', async () => {
    const input = await insertCardTransaction(env.database.db, env.config.MASTER_KEY, merchant, {
      pan: '4242424242424242',
    });
    const taskStartedAt = Date.now() - SEND_NOTED_WITHIN_MS - 1_000;
    await expect(authorizeAsLostTask(input, 0, [], taskStartedAt)).rejects.toMatchObject({
      type: failureTypes.lateAttempt,
      message: 'The authorization was not sent: its attempt ran late.',
    });
    const sent = await keysNotedFor(input.transactionId);
    expect(sent).toEqual([]);
    expect(await authorizationsOf(input.transactionId)).toEqual([]);
  });

  it("gives the acquirer a deadline counted from the task's start, not from the send", async () => {
    const input = await insertCardTransaction(env.database.db, env.config.MASTER_KEY, merchant, {
      pan: '4242424242424242',
    });
    const taskStartedAt = Date.now() - 3_000;
    // A bound for the note far off: the test is the deadline, on however loaded a machine.
    const terminalId = (await authorizeAsLostTask(input, 0, [], taskStartedAt, 60_000))!;
    const key = connectorKeys.authorization(input.transactionId, terminalId);
    expect(deadlines.get(key)).toBe(taskStartedAt + SEND_DEADLINE_MS);
  });

  it('notes the key but sends nothing when the note commits past the bound', async () => {
    const input = await insertCardTransaction(env.database.db, env.config.MASTER_KEY, merchant, {
      pan: '4242424242424242',
    });
    // Another session holds the card's vault row (a slow database): the note waits past the bound.
    const held = await holdRowLocks(
      env.database.db,
      sql`select 1 from ${cardVault} where ${cardVault.transactionId} = ${input.transactionId} for update`,
    );
    // Its refusal taken as it comes: it can come before `release` returns (the note commits as soon as the
    // hold's own commit frees the row), and a rejection left unheard until then is reported as unhandled.
    const attempt = authorizeAsLostTask(input, 0, [], Date.now(), 1_000).then(
      () => undefined,
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await held.release();
    expect(await attempt).toMatchObject({ type: failureTypes.lateAttempt });
    const sent = await keysNotedFor(input.transactionId);
    // Noted, so the next attempt's refusal of it is not taken as definite; never sent.
    expect(sent).toHaveLength(1);
    expect(await authorizationsOf(input.transactionId)).toEqual([]);
  });

  it("counts the acquirer's deadline from the task's start, not from the local activity before it", async () => {
    // The run's first step takes 2 s: workflow time moves on by that much when it completes.
    const { deadline, startedAt } = await paymentWithBindingHeldUp(2_000);
    expect(Math.abs(deadline - (startedAt + SEND_DEADLINE_MS))).toBeLessThanOrEqual(1);
  });

  it("keeps each payment's task clock its own, for payments running at once in one worker", async () => {
    // The first task of each has the same history length: a clock shared between them would give the
    // later one the earlier one's start.
    const [slow, quick] = await Promise.all([
      paymentWithBindingHeldUp(2_000),
      new Promise((resolve) => setTimeout(resolve, 1_000)).then(() => paymentWithBindingHeldUp(0)),
    ]);
    expect(quick.startedAt - slow.startedAt).toBeGreaterThan(500);
    for (const { deadline, startedAt } of [slow, quick])
      expect(Math.abs(deadline - (startedAt + SEND_DEADLINE_MS))).toBeLessThanOrEqual(1);
  });

  it('makes an attempt that ran late again in a fresh task, at the same terminal', async () => {
    const input = await insertCardTransaction(env.database.db, env.config.MASTER_KEY, merchant, {
      pan: '4242424242424242',
    });
    const [first] = await lostTask().listTerminals({
      merchantId: input.merchantId,
      mode: 'test',
      kind: 'card',
    });
    // The first attempt starts past the bound for its note: it sends nothing, and is not taken for a
    // refusal that would send the card to the next terminal.
    heldUp.set(input.transactionId, [SEND_NOTED_WITHIN_MS + 1_000]);
    const handle = await env.client.workflow.start(cardPayment, {
      workflowId: workflowIds.transaction(input.transactionId),
      taskQueue: env.config.TEMPORAL_TASK_QUEUE,
      args: [input],
    });
    expect(await handle.result()).toEqual({
      status: 'SUCCESS',
      message: 'Transaction processed successfully.',
    });
    expect(await rowOf(input.transactionId)).toMatchObject({
      status: 'SUCCESS',
      terminalId: first!.terminalId,
    });
    expect(await authorizationsOf(input.transactionId)).toHaveLength(1);
    // Tried again after a timer, so in a workflow task of its own (more than once on a loaded machine).
    const { events } = await handle.fetchHistory();
    expect(events!.filter((event) => event.timerStartedEventAttributes).length).toBeGreaterThanOrEqual(1);
  });
});
