/**
 * Hunts for money bugs: fast-check generates transactions of every kind with random interleavings of
 * deposits (bursts, duplicates, late ones, zero ones), customer decisions, connector faults (refused
 * calls, lost answers, lookups still pending), workers lost before and between the reserve, send and
 * settle of a payout's combined step, timeouts, cancellations and ops stops (also while an
 * outcome is unknown), updates sent by name without the service's proof (as the Temporal UI can), runs
 * started by hand with the transaction's input copied and changed (under a new id, and under the paid id
 * once it closed) and sent the updates copied from its history, proofs copied and sent again, worker
 * restarts, and workflow tasks lost after their local connector calls (a card authorized, or refused then
 * authorized at the next terminal, by an attempt the history never saw, with the terminals changed before
 * the retry). It runs them on the time-skipping server with the real workflows and activities, and checks
 * the money invariants after every run. `MONEY_PROPERTY_RUNS` sets how many batches of ten run (default 50:
 * 500 transactions), shared among `MONEY_PROPERTY_LANES` lanes (default 2), each its own server, worker and
 * database, lane i from seed + i; `MONEY_PROPERTY_SEED` (the failing lane's) and `MONEY_PROPERTY_PATH`
 * start again at the batch a failure names, in one lane; `MONEY_PROPERTY_TRACE` prints each step.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { asc, eq, like } from 'drizzle-orm';
import {
  Client,
  WorkflowFailedError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import { changedInput, copyRun } from '../helpers/forged-runs';
import { updateKeyOf } from '../../src/ciphers/update-proof';
import { reconciliationLegs } from '../../activities/reconciliation';
import { activityEnvironment } from '../helpers/mock-activity';
import { activitiesOutsideAnyRun } from '../../activities/index';
import { dataConverter } from '../../src/temporal/client';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { faultyConnectors, type Fault, type FaultPlan } from '../helpers/faulty-connectors';
import type { PayoutStep } from '../../activities/payouts';
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
  opsActions,
  sandboxOperations,
  terminals as terminals_,
  transactions,
  wallets,
} from '../../src/db/schema/index';
import { cardPayment } from '../../workflows/card-payment';
import { cardPayout } from '../../workflows/card-payout';
import { cryptoPayin } from '../../workflows/crypto-payin';
import { cryptoRamp } from '../../workflows/crypto-ramp';
import {
  INTERNAL_UPDATES,
  NOT_AN_OPS_ACTION,
  connectorKeys,
  failureTypes,
  firstAnswerUpdate,
  forceFailUpdate,
  hostedDecisionUpdate,
  isFinal,
  type CardPaymentInput,
  type CryptoExpectation,
  type FirstAnswer,
} from '../../src/contracts';
import { classify, settledFiat, toleranceUnits, type ToleranceSettings } from '../../src/lib/settlement';
import { formatUnits, parseUnits } from '../../src/lib/units';
import { submitDeposit } from '../../src/transactions/deposits';
import { createMerchant, type MerchantCredentials } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';

const BATCH = Number(process.env.MONEY_PROPERTY_BATCH ?? 10);
/**
 * Transactions run one after another: the Java time-skipping server stops skipping its clock when several
 * clients wait on results at once. Within a transaction, bursts of deposits still arrive together.
 */
const CONCURRENCY = Number(process.env.MONEY_PROPERTY_CONCURRENCY ?? 1);
const RUNS = Number(process.env.MONEY_PROPERTY_RUNS ?? 50);
/**
 * The Java time-skipping server now and then loses a workflow task it handed to the worker (seen around runs
 * started by hand and sent updates) and hands it out again only once the task times out: at the default 10 s
 * of real time, about one transaction in thirty waited that long. A task that runs longer still completes:
 * the worker heartbeats a task whose local activities outlast most of this timeout.
 */
const TASK_TIMEOUT = process.env.MONEY_PROPERTY_TASK_TIMEOUT ?? '3s';
/** Lanes side by side; one when a failing batch is replayed (its seed is the lane's own). */
const LANES = Number(process.env.MONEY_PROPERTY_LANES ?? (process.env.MONEY_PROPERTY_PATH ? 1 : 2));

// ---- scenarios ---------------------------------------------------------------------------------------

type Step =
  | { kind: 'deposits'; deposits: { hash: number; share: number; withSender: boolean }[] }
  | { kind: 'decision'; decision: 'approve' | 'decline' }
  | { kind: 'cancel' }
  | { kind: 'forceFail' }
  /** An internal update sent by name without proof, as the Temporal UI can: refused, moves nothing. */
  | { kind: 'forged' }
  /**
   * A run started by hand under a new id, the transaction's input copied and changed (another merchant's
   * wallet, a thousand times the amount), sent every update copied from the transaction's history.
   */
  | { kind: 'forgedStart' }
  /** The internal updates the run took so far, proofs and all, sent to it again. */
  | { kind: 'copiedProof' }
  | { kind: 'restart' }
  | { kind: 'wait'; ms: number };

/**
 * A workflow task lost after its local connector calls: what it sent before the workflow's history saw
 * any of it, and how the terminals changed before the retry.
 */
interface LostTask {
  sent: 'nothing' | 'first' | 'first refused, then second';
  then: 'unchanged' | 'first deactivated';
}

interface CryptoScenario {
  kind: 'payin' | 'offramp';
  asset: 'USDT' | 'BTC';
  expectedUnits: number;
  fiatMinor: number;
  windowSeconds: number;
  underpaid: 'fail' | 'accept';
  overpaid: 'keep' | 'refund';
  tolerance: { kind: 'none' } | { kind: 'asset'; share: number } | { kind: 'fiat'; minor: number };
  steps: Step[];
  afterClose: number[];
}

interface CardScenario {
  kind: 'card';
  pan: string;
  plan: FaultPlan;
  lost: LostTask;
  timeoutSeconds: number;
  steps: Step[];
}

interface PayoutScenario {
  kind: 'payout';
  pan: string;
  amount: number;
  balance: number;
  secondTerminal: boolean;
  plan: FaultPlan;
  timeoutSeconds: number;
  steps: Step[];
}

interface OnrampScenario {
  kind: 'onramp';
  steps: Step[];
}

type Scenario = CryptoScenario | CardScenario | PayoutScenario | OnrampScenario;

const faults = fc.array(fc.constantFrom<Fault>('ok', 'ok', 'refuse', 'lose'), { maxLength: 4 });
const plan: fc.Arbitrary<FaultPlan> = fc.record({
  authorize: faults,
  completeChallenge: faults,
  send: faults,
  confirm: faults,
  pendingLookups: fc.nat({ max: 2 }),
  crashAfter: fc.array(fc.constantFrom<PayoutStep>('started', 'reserved', 'sent', 'settled'), {
    maxLength: 4,
  }),
});
const decision = fc
  .constantFrom('approve', 'decline')
  .map((d) => ({ kind: 'decision', decision: d }) as Step);
const cancel = fc.constant({ kind: 'cancel' } as Step);
const forceFail = fc.constant({ kind: 'forceFail' } as Step);
const forged = fc.constant({ kind: 'forged' } as Step);
const forgedStart = fc.constant({ kind: 'forgedStart' } as Step);
const copiedProof = fc.constant({ kind: 'copiedProof' } as Step);
/** The worker is stopped and a new one started, with whatever the transaction was doing in flight. */
const restart = fc.constant({ kind: 'restart' } as Step);
/**
 * A pause in real time. The server skips its clock ahead whenever every workflow is idle and a client
 * waits on a result, so while one transaction pauses, another's wait may move time by hours: windows
 * close and challenges expire between steps. (An explicit server sleep is not used: several at once
 * stall the time-skipping server.)
 */
const wait = fc.integer({ min: 1, max: 60 }).map((ms) => ({ kind: 'wait', ms }) as Step);
const decisionSteps = fc.oneof(
  { weight: 6, arbitrary: decision },
  { weight: 2, arbitrary: wait },
  { weight: 1, arbitrary: cancel },
  { weight: 1, arbitrary: forceFail },
  { weight: 1, arbitrary: forged },
  { weight: 1, arbitrary: forgedStart },
  { weight: 1, arbitrary: copiedProof },
  { weight: 1, arbitrary: restart },
);
const lostTask: fc.Arbitrary<LostTask> = fc.record({
  sent: fc.constantFrom('nothing', 'nothing', 'first', 'first refused, then second'),
  then: fc.constantFrom('unchanged', 'first deactivated'),
});
/** Shares of the expected amount, in millionths, around the boundaries that matter. */
const share = fc.oneof(
  fc.constantFrom(1_000_000, 999_999, 1_000_001, 500_000, 250_000, 1, 2_000_000, 0),
  fc.integer({ min: 1, max: 1_500_000 }),
);
const deposits = fc
  .array(
    fc.record({ hash: fc.nat({ max: 5 }), share, withSender: fc.constantFrom(true, true, true, false) }),
    {
      minLength: 1,
      maxLength: 3,
    },
  )
  .map((d) => ({ kind: 'deposits', deposits: d }) as Step);

const cryptoScenario: fc.Arbitrary<Scenario> = fc.record({
  kind: fc.constantFrom('payin', 'offramp'),
  asset: fc.constantFrom('USDT', 'BTC'),
  expectedUnits: fc.integer({ min: 1_000, max: 500_000_000 }),
  fiatMinor: fc.integer({ min: 1, max: 10_000_000 }),
  windowSeconds: fc.constantFrom(60, 3600, 86_400),
  underpaid: fc.constantFrom('fail', 'accept'),
  overpaid: fc.constantFrom('keep', 'refund'),
  tolerance: fc.oneof(
    fc.constant({ kind: 'none' as const }),
    fc.integer({ min: 0, max: 50_000 }).map((s) => ({ kind: 'asset' as const, share: s })),
    fc.integer({ min: 0, max: 500 }).map((m) => ({ kind: 'fiat' as const, minor: m })),
  ),
  steps: fc.array(
    fc.oneof(
      { weight: 12, arbitrary: deposits },
      { weight: 2, arbitrary: wait },
      { weight: 1, arbitrary: cancel },
      { weight: 1, arbitrary: forceFail },
      { weight: 1, arbitrary: forged },
      { weight: 1, arbitrary: forgedStart },
      { weight: 1, arbitrary: copiedProof },
      { weight: 1, arbitrary: restart },
    ),
    { maxLength: 5 },
  ),
  afterClose: fc.array(share, { maxLength: 2 }),
}) as fc.Arbitrary<Scenario>;

const cardScenario: fc.Arbitrary<Scenario> = fc.record({
  kind: fc.constant('card'),
  pan: fc.constantFrom(
    '4242424242424242',
    '4111111111111111',
    '4000000000000002',
    '4000000000000119',
    '4000000000000770',
    '4012888888881881',
  ),
  plan,
  lost: lostTask,
  timeoutSeconds: fc.constantFrom(60, 900),
  steps: fc.array(decisionSteps, { maxLength: 3 }),
}) as fc.Arbitrary<Scenario>;

const payoutScenario: fc.Arbitrary<Scenario> = fc.record({
  kind: fc.constant('payout'),
  pan: fc.constantFrom(
    '4222222222222222',
    '4333333333333333',
    '4000000000003220',
    '4000000000003261',
    '4000000000003279',
    '4012888888881881',
  ),
  amount: fc.integer({ min: 1, max: 1200 }),
  balance: fc.integer({ min: 0, max: 3000 }),
  secondTerminal: fc.boolean(),
  plan,
  timeoutSeconds: fc.constantFrom(60, 86_400),
  steps: fc.array(decisionSteps, { maxLength: 3 }),
}) as fc.Arbitrary<Scenario>;

const onrampScenario: fc.Arbitrary<Scenario> = fc.record({
  kind: fc.constant('onramp'),
  steps: fc.array(decisionSteps, { maxLength: 3 }),
}) as fc.Arbitrary<Scenario>;

const kinds = { crypto: cryptoScenario, card: cardScenario, payout: payoutScenario, onramp: onrampScenario };
const only = process.env.MONEY_PROPERTY_KINDS?.split(',') as (keyof typeof kinds)[] | undefined;
const scenario = fc.oneof(...(only ?? (Object.keys(kinds) as (keyof typeof kinds)[])).map((k) => kinds[k]));
const batch = fc.array(scenario, { minLength: BATCH, maxLength: BATCH });

// ---- environment -------------------------------------------------------------------------------------

const plans = new Map<string, FaultPlan>();

/**
 * One lane of the property: its own time-skipping server, worker and database, running its batches one
 * transaction after another. Lanes run side by side (a lane waits on its server most of the time).
 */
interface Lane {
  ts: TimeSkippingEnv;
  /** The Temporal UI: the same server and codec, none of the service's keys. */
  ui: Client;
  checked: number;
  forgedRuns: number;
  /** The merchant whose wallet the runs started by hand name. */
  victim?: MerchantCredentials;
}
const lanes: Lane[] = [];
const current = new AsyncLocalStorage<Lane>();
/** The lane the calling scenario runs in. */
const lane = () => current.getStore()!;
const ts = () => lane().ts;
const db = () => ts().database.db;
const ui = () => lane().ui;

beforeAll(async () => {
  const started = await Promise.all(
    Array.from({ length: LANES }, () =>
      startTimeSkipping(
        {},
        (database) => {
          const connectors = faultyConnectors(database.db, plans);
          return {
            cardConnectors: { 'sandbox-acquirer': connectors.card },
            payoutConnectors: { 'sandbox-payouts': connectors.payout },
            afterPayoutStep: connectors.afterPayoutStep,
          };
        },
        // No workflow cache: every workflow task replays the history from the start, as a worker that was
        // restarted before each step would. (Stopping a worker mid-run strands the sticky tasks of its
        // workflows on the Java time-skipping server, which never gives them to another worker.)
        { maxCachedWorkflows: Number(process.env.MONEY_PROPERTY_CACHE ?? 0) },
      ),
    ),
  );
  for (const env of started) {
    const ui = new Client({ connection: env.env.connection, dataConverter: dataConverter(env.config) });
    lanes.push({ ts: env, ui, checked: 0, forgedRuns: 0 });
  }
}, 300_000);
afterAll(() => Promise.all(lanes.map((l) => l.ts.close())));

// ---- running one scenario ----------------------------------------------------------------------------

interface Ran {
  scenario: Scenario;
  merchant: MerchantCredentials;
  transactionId: string;
  result: FirstAnswer;
  /** Every deposit hash sent, with its amount in base units. */
  sent: Map<string, bigint>;
  expectation?: CryptoExpectation;
}

async function newMerchant(s: Scenario): Promise<MerchantCredentials> {
  const balance = s.kind === 'payout' ? BigInt(s.balance) : 1_000_000n;
  const terminals = [...SANDBOX_TERMINALS];
  if (s.kind === 'payout' && s.secondTerminal) {
    terminals.push({
      connector: 'sandbox-payouts',
      kinds: ['payout'],
      priority: 50,
      descriptor: 'SANDBOX*P2',
    });
  }
  return createMerchant(db(), ts().config.MASTER_KEY, {
    name: 'Property merchant',
    wallets: [{ currency: 'USD', amount: balance }],
    terminals,
    liveSandbox: true,
  });
}

async function applyPolicies(s: CryptoScenario, merchant: MerchantCredentials): Promise<void> {
  await db()
    .update(merchants)
    .set({
      underpaidPolicy: s.underpaid,
      overpaidPolicy: s.overpaid,
      cryptoToleranceFiat: s.tolerance.kind === 'fiat' ? formatUnits(BigInt(s.tolerance.minor), 2) : null,
    })
    .where(eq(merchants.id, merchant.merchant_id));
  if (s.tolerance.kind === 'asset') {
    const decimals = s.asset === 'BTC' ? 8 : 6;
    const units = (BigInt(s.expectedUnits) * BigInt(s.tolerance.share)) / 1_000_000n;
    await db()
      .insert(cryptoTolerances)
      .values({
        merchantId: merchant.merchant_id,
        cryptoCurrency: s.asset,
        tolerance: formatUnits(units, decimals),
      });
  }
}

async function start(s: Scenario, merchant: MerchantCredentials) {
  const key = ts().config.MASTER_KEY;
  const run = async <T extends { transactionId: string }>(
    workflow: (input: T) => Promise<unknown>,
    input: T,
  ) => {
    // Recorded as the API records it (src/transactions/create.ts), with the update key the test client
    // adds: reconciliation reads a payin's locked rate from it.
    await db()
      .update(transactions)
      .set({ workflowInput: { ...input, updateKey: updateKeyOf(key) } })
      .where(eq(transactions.id, input.transactionId));
    const handle = await ts().env.client.workflow.start(workflow, {
      workflowId: input.transactionId,
      taskQueue: ts().taskQueue,
      args: [input],
      workflowTaskTimeout: TASK_TIMEOUT,
    });
    return { input, handle };
  };
  switch (s.kind) {
    case 'card': {
      const input = await insertCardTransaction(db(), key, merchant, {
        pan: s.pan,
        challengeTimeoutSeconds: s.timeoutSeconds,
      });
      plans.set(input.transactionId, structuredClone(s.plan));
      await loseTask(s.lost, input, merchant);
      return run(cardPayment, input);
    }
    case 'payout': {
      const input = await insertPayoutTransaction(db(), key, merchant, {
        pan: s.pan,
        amountMinor: BigInt(s.amount),
        verificationTimeoutSeconds: s.timeoutSeconds,
      });
      plans.set(input.transactionId, structuredClone(s.plan));
      return run(cardPayout, input);
    }
    case 'onramp':
      return run(cryptoRamp, await insertRampTransaction(db(), merchant, 'ONRAMP'));
    default: {
      await applyPolicies(s, merchant);
      const crypto = {
        cryptoCurrency: s.asset,
        cryptoNetwork: s.asset === 'BTC' ? 'BITCOIN' : 'TRON',
        decimals: s.asset === 'BTC' ? 8 : 6,
        expectedUnits: String(s.expectedUnits),
        fiatMinor: String(s.fiatMinor),
        depositWindowSeconds: s.windowSeconds,
      };
      return s.kind === 'payin'
        ? run(cryptoPayin, await insertPayinTransaction(db(), merchant, crypto))
        : run(cryptoRamp, await insertRampTransaction(db(), merchant, 'OFFRAMP', crypto));
    }
  }
}

/**
 * What a workflow task lost after its local connector calls leaves behind: authorizations made through the
 * activities as the lost attempt ran them (the faults of the plan apply), then the terminals changed.
 */
async function loseTask(lost: LostTask, input: CardPaymentInput, merchant: MerchantCredentials) {
  if (lost.sent === 'nothing') return;
  const activities = activitiesOutsideAnyRun({
    db: db(),
    config: ts().config,
    cardConnectors: { 'sandbox-acquirer': faultyConnectors(db(), plans).card },
  });
  const terminals = await activities.listTerminals({
    merchantId: merchant.merchant_id,
    mode: 'test',
    kind: 'card',
  });
  const refused: string[] = [];
  for (const [rank, terminal] of terminals.slice(0, lost.sent === 'first' ? 1 : 2).entries()) {
    const authorizationKey = connectorKeys.authorization(input.transactionId, terminal.terminalId);
    // The lost attempt's first call is refused (`first refused, then second`) or goes as the plan says.
    if (rank === 0 && lost.sent !== 'first') plans.get(input.transactionId)!.authorize?.unshift('refuse');
    const outcome = await activityEnvironment()
      .run(activities.authorizeCard, {
        transactionId: input.transactionId,
        authorizationKey,
        mode: 'test' as const,
        connector: terminal.connector,
        terminalId: terminal.terminalId,
        terminalRank: rank,
        amountMinor: input.amountMinor,
        currency: input.currency,
        notProcessed: refused,
      })
      .then(
        () => 'answered',
        (error: { type?: string }) => (error.type === failureTypes.notProcessed ? 'refused' : 'lost'),
      );
    if (outcome !== 'refused') break;
    refused.push(authorizationKey);
  }
  if (lost.then === 'first deactivated')
    await db().update(terminals_).set({ active: false }).where(eq(terminals_.id, terminals[0]!.terminalId));
}

/** Sends one deposit through the service's own path: to the workflow, or held once the workflow closed. */
async function sendDeposit(id: string, units: bigint, hash: string, withSender: boolean) {
  const [row] = await db().select().from(transactions).where(eq(transactions.id, id));
  const details = row!.details as { crypto?: string; crypto_currency?: string };
  const decimals = (details.crypto ?? details.crypto_currency) === 'BTC' ? 8 : 6;
  await submitDeposit(db(), ts().env.client, row!, {
    amount: formatUnits(units, decimals),
    txHash: hash,
    ...(withSender ? { sender: `sender-${hash}` } : {}),
    source: 'sandbox',
  });
}

/**
 * Waits for `what` at most a minute of real time (a client waiting on an update stops the time-skipping
 * server's clock, so a wait on a timer there would never end), and on failure says where the workflow was.
 */
async function within<T>(handle: WorkflowHandle, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(async () => {
      const history = await handle.fetchHistory().catch(() => undefined);
      const events = (history?.events ?? []).map(
        (e) =>
          `${e.eventId} ${e.eventType} ${e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''}${e.markerRecordedEventAttributes?.markerName ?? ''}${e.timerStartedEventAttributes ? ` timer ${String(e.timerStartedEventAttributes.startToFireTimeout?.seconds)} s` : ''}`,
      );
      reject(new Error(`${handle.workflowId} gave no ${what} within a minute:\n${events.join('\n')}`));
    }, 60_000);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts the transaction's workflow again by hand, as the Temporal UI or CLI can, under `workflowId`: its
 * input copied from the history and changed (another merchant's wallet, a thousand times the amount), then
 * sends it every update copied from the transaction's history. The run fails at its first step.
 */
async function forgeRun(handle: WorkflowHandleWithFirstExecutionRunId, workflowId: string): Promise<void> {
  lane().victim ??= await createMerchant(db(), ts().config.MASTER_KEY, {
    name: 'Forger',
    wallets: [{ currency: 'USD', amount: 0n }],
    terminals: SANDBOX_TERMINALS,
    liveSandbox: true,
  });
  const copied = await copyRun(ts().env.client, ts().config, handle.workflowId, handle.firstExecutionRunId);
  const changed = changedInput(copied.input, lane().victim!.wallets[0]!.wallet_id);
  const forged = await ui().workflow.start(copied.type, {
    workflowId,
    taskQueue: ts().taskQueue,
    args: [workflowId === handle.workflowId ? changed : { ...changed, transactionId: workflowId }],
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    workflowTaskTimeout: TASK_TIMEOUT,
  });
  for (const update of copied.updates)
    await forged.executeUpdate(update.name, { args: update.args }).catch(() => undefined);
  const failure = await forged.result().then(
    () => undefined,
    (error: WorkflowFailedError) => error.cause,
  );
  expect((failure as ApplicationFailure | undefined)?.type, `a run started by hand under ${workflowId}`).toBe(
    failureTypes.notTheServiceRun,
  );
  lane().forgedRuns += 1;
}

/** Nothing reached the forger's wallet, and every forged run is on the audit trail. */
async function checkForgedRuns(): Promise<void> {
  const victim = lane().victim;
  if (victim) {
    const walletId = victim.wallets[0]!.wallet_id;
    const [wallet] = await db().select().from(wallets).where(eq(wallets.id, walletId));
    expect(wallet!.available, "the forger's wallet got nothing").toBe(0n);
    expect(await db().select().from(ledgerEntries).where(eq(ledgerEntries.walletId, walletId))).toEqual([]);
  }
  const audited = await db().select().from(opsActions).where(eq(opsActions.action, 'refusedRun'));
  expect(audited.length, 'every run started by hand is on the audit trail').toBe(lane().forgedRuns);
}

/**
 * Waits (briefly) until the transaction's workflow has no task or activity in flight. A worker replaced in
 * mid-task leaves the task to time out in real time (the server does not skip time meanwhile); the API
 * crash tests cover that case, here the restart is between steps.
 */
async function untilIdle(handle: WorkflowHandle): Promise<void> {
  for (let i = 0; i < 40; i++) {
    const { raw } = await handle.describe();
    if (!raw.pendingWorkflowTask && (raw.pendingActivities?.length ?? 0) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Runs one scenario within a budget of real time, and when it does not end says where: its steps so far,
 * and where its workflow and the runs started by hand under it were. A scenario takes under a second on the
 * whole; the slowest wait in real time for tasks a replaced worker held (at most five restarts, each up to
 * an activity's 30-second timeout), so five minutes is far past any that is not stuck.
 */
async function runWatched(
  s: Scenario,
  merchant: MerchantCredentials,
  started: Awaited<ReturnType<typeof start>>,
): Promise<Ran> {
  const traced: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void whereIs([started.handle.workflowId, ...forgedIds(traced)]).then((where) =>
        reject(
          new Error(
            `${started.handle.workflowId} did not end within ${SCENARIO_BUDGET_MS / 1000} s of real time:\n` +
              `${JSON.stringify(s)}\n${traced.join('\n')}\n${where}`,
          ),
        ),
      );
    }, SCENARIO_BUDGET_MS);
  });
  try {
    return await Promise.race([runScenario(s, merchant, started, traced), stuck]);
  } finally {
    clearTimeout(timer);
  }
}

/** The ids of the runs a scenario started by hand, from its trace. */
const forgedIds = (traced: string[]) => traced.flatMap((line) => /forging (\S+)/.exec(line)?.[1] ?? []);

const SCENARIO_BUDGET_MS = Number(process.env.MONEY_PROPERTY_SCENARIO_BUDGET_MS ?? 300_000);

/** The latest run under each id, event by event, with what it had in flight. */
async function whereIs(ids: string[]): Promise<string> {
  const lines: string[] = [];
  for (const id of ids) {
    const handle = ts().env.client.workflow.getHandle(id);
    const described = await handle.describe().catch(() => undefined);
    lines.push(
      `${id} run ${described?.runId ?? '?'} ${described?.status.name ?? '?'}; workflow task in flight: ` +
        `${Boolean(described?.raw.pendingWorkflowTask)}; activities in flight: ` +
        `${(described?.raw.pendingActivities ?? []).map((a) => `${a.activityType?.name} (attempt ${a.attempt})`).join(', ')}`,
    );
    const history = await handle.fetchHistory().catch(() => undefined);
    for (const e of history?.events ?? [])
      lines.push(
        `  ${e.eventId} ${e.eventType} ${e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''}` +
          `${e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ?? ''}` +
          `${e.timerStartedEventAttributes ? ` timer ${String(e.timerStartedEventAttributes.startToFireTimeout?.seconds)} s` : ''}` +
          `${e.activityTaskFailedEventAttributes?.failure?.message ?? ''}${e.workflowTaskFailedEventAttributes?.failure?.message ?? ''}` +
          `${e.workflowTaskTimedOutEventAttributes ? ` timed out (${String(e.workflowTaskTimedOutEventAttributes.timeoutType)})` : ''}`,
      );
  }
  return lines.join('\n');
}

async function runScenario(
  s: Scenario,
  merchant: MerchantCredentials,
  started: Awaited<ReturnType<typeof start>>,
  traced: string[],
): Promise<Ran> {
  const { handle, input } = started;
  const id = input.transactionId;
  const sent = new Map<string, bigint>();
  const expected = s.kind === 'payin' || s.kind === 'offramp' ? BigInt(s.expectedUnits) : 0n;
  // A share of 0 is a zero-value deposit, which the workflow refuses and the service holds.
  const unitsOf = (share: number) => {
    const units = (expected * BigInt(share)) / 1_000_000n;
    return units > 0n || share === 0 ? units : 1n;
  };
  const trace = (what: string) => {
    const line = `${new Date().toISOString()} ${id} ${s.kind} ${what}`;
    traced.push(line);
    if (process.env.MONEY_PROPERTY_TRACE) console.log(line);
  };
  trace('start');
  // The first answer is asked for as the API does, but not waited on: a client waiting on an update stops
  // the time-skipping server's clock, and a first answer may wait on a timer (a payout every terminal
  // refused backs off before its first move). The steps may come before it; what they meet is the point.
  await within(
    handle,
    'its first task',
    handle.startUpdate(firstAnswerUpdate, { waitForStage: WorkflowUpdateStage.ACCEPTED }),
  );
  for (const step of s.steps) {
    trace(JSON.stringify(step));
    if (step.kind === 'deposits') {
      await Promise.all(
        step.deposits.map((d) => {
          const hash = `h${d.hash}`;
          const units = sent.get(hash) ?? unitsOf(d.share);
          sent.set(hash, units);
          return sendDeposit(id, units, hash, d.withSender);
        }),
      );
    } else if (step.kind === 'decision') {
      await handle
        .startUpdate(hostedDecisionUpdate, {
          args: [step.decision],
          waitForStage: WorkflowUpdateStage.ACCEPTED,
        })
        .catch(() => undefined);
    } else if (step.kind === 'cancel') {
      await handle.cancel().catch(() => undefined);
    } else if (step.kind === 'forceFail') {
      // Accepted or refused (a final transaction, an outcome being asked for); its answer is not awaited.
      await handle
        .startUpdate(forceFailUpdate, {
          args: [{ reason: 'Stopped by the property test.', actor: 'property' }],
          waitForStage: WorkflowUpdateStage.ACCEPTED,
        })
        .catch(() => undefined);
    } else if (step.kind === 'forged') {
      const forgedUpdate =
        s.kind === 'payin' || s.kind === 'offramp'
          ? { name: 'deposit', arg: { txHash: 'forged', units: String(expected * 2n), sender: 'forger' } }
          : { name: 'hostedDecision', arg: 'approve' };
      const refused = await ui()
        .workflow.getHandle(id)
        .executeUpdate(forgedUpdate.name, { args: [forgedUpdate.arg] })
        .then(
          () => 'taken',
          (error: unknown) => (error instanceof WorkflowUpdateFailedError ? error.cause?.message : 'closed'),
        );
      expect(['closed', NOT_AN_OPS_ACTION], `a forged ${forgedUpdate.name}`).toContain(refused);
    } else if (step.kind === 'forgedStart') {
      const forgedId = `PAforged${lane().forgedRuns}x${id.slice(2)}`;
      trace(`forging ${forgedId}`);
      await forgeRun(handle, forgedId);
    } else if (step.kind === 'copiedProof') {
      const { updates } = await copyRun(ts().env.client, ts().config, id, handle.firstExecutionRunId);
      // The updates that carry a proof (ops updates carry none: sent again by name, they are ops' again).
      const proven = updates.filter((u) => (INTERNAL_UPDATES as readonly string[]).includes(u.name));
      for (const update of proven) {
        const sent = await ui()
          .workflow.getHandle(id, handle.firstExecutionRunId)
          .executeUpdate(update.name, { args: update.args })
          .then(
            () => 'taken',
            (error: unknown) =>
              error instanceof WorkflowUpdateFailedError ? error.cause?.message : 'closed',
          );
        expect(['closed', NOT_AN_OPS_ACTION], `a copied ${update.name}`).toContain(sent);
      }
    } else if (step.kind === 'restart') {
      await untilIdle(handle);
      await ts().restartWorker();
    } else {
      await new Promise((resolve) => setTimeout(resolve, step.ms));
    }
  }
  trace('awaiting result');
  const result = (await handle.result()) as FirstAnswer;
  trace(`result ${result.status}`);
  if (!isFinal(result.status))
    expect.fail(`${id} ended on ${result.status}, which is not final:\n${await whereIs([id])}`);
  // Started again by hand under the paid id, now that it closed (a third of the time: each costs a run).
  if (s.steps.length % 3 === 0) {
    trace(`forging ${id} again`);
    await forgeRun(handle, id);
  }
  if (s.kind === 'payin' || s.kind === 'offramp') {
    for (const [i, share] of s.afterClose.entries()) {
      const hash = `late${i}`;
      sent.set(hash, unitsOf(share));
      await sendDeposit(id, unitsOf(share), hash, true);
    }
  }
  const expectation = 'crypto' in input ? (input.crypto as CryptoExpectation) : undefined;
  return { scenario: s, merchant, transactionId: id, result, sent, expectation };
}

// ---- invariants --------------------------------------------------------------------------------------

async function checkWallets(ran: Ran): Promise<void> {
  for (const wallet of ran.merchant.wallets) {
    const [row] = await db().select().from(wallets).where(eq(wallets.id, wallet.wallet_id));
    const entries = await db()
      .select()
      .from(ledgerEntries)
      .where(eq(ledgerEntries.walletId, wallet.wallet_id));
    const total = entries.reduce((sum, e) => sum + e.amount, 0n);
    expect(row!.available, `wallet ${wallet.wallet_id} equals its ledger`).toBe(total);
    expect(row!.available >= 0n).toBe(true);
  }
}

async function ledgerOf(id: string) {
  return db()
    .select()
    .from(ledgerEntries)
    .where(eq(ledgerEntries.reference, id))
    .orderBy(asc(ledgerEntries.id));
}

async function booksOf(id: string) {
  return db()
    .select()
    .from(sandboxOperations)
    .where(like(sandboxOperations.idempotencyKey, `${id}:%`));
}

async function checkProjectionAndWebhook(ran: Ran): Promise<void> {
  const [row] = await db().select().from(transactions).where(eq(transactions.id, ran.transactionId));
  expect(row!.status, 'the projection shows the workflow result').toBe(ran.result.status);
  expect(row!.message).toBe(ran.result.message);
  if (ran.scenario.kind === 'card' || ran.scenario.kind === 'payout') {
    const [vault] = await db().select().from(cardVault).where(eq(cardVault.transactionId, ran.transactionId));
    expect(vault?.panEnc ?? null, 'no card number outlives the transaction').toBeNull();
    expect(vault?.cvvEnc ?? null).toBeNull();
  }
}

async function checkCard(ran: Ran): Promise<void> {
  const approved = (await booksOf(ran.transactionId)).filter((b) => b.state === 'approved');
  expect(approved.length, 'a card is charged at most once').toBeLessThanOrEqual(1);
  expect(ran.result.status === 'SUCCESS', 'SUCCESS exactly when the acquirer approved').toBe(
    approved.length === 1,
  );
}

async function checkPayout(ran: Ran, s: PayoutScenario): Promise<void> {
  const paid = (await booksOf(ran.transactionId)).filter((b) => b.state === 'paid');
  expect(paid.length, 'a payout is paid at most once').toBeLessThanOrEqual(1);
  const steps = (await ledgerOf(ran.transactionId)).map((e) => [e.step, e.amount]);
  const amount = BigInt(s.amount);
  if (ran.result.status === 'SUCCESS') {
    expect(paid.length, 'SUCCESS only when the processor paid').toBe(1);
    expect(steps).toEqual([
      ['reserve', -amount],
      ['settle', 0n],
    ]);
  } else {
    expect(paid.length, 'a failed payout was not paid by the processor').toBe(0);
    const released = [
      ['reserve', -amount],
      ['release', amount],
    ];
    expect([[], released], 'no reserve, or a reserve released').toContainEqual(steps);
  }
}

async function checkCrypto(ran: Ran, s: CryptoScenario): Promise<void> {
  const rate = ran.expectation!;
  const rows = await db()
    .select()
    .from(cryptoDeposits)
    .where(eq(cryptoDeposits.transactionId, ran.transactionId));
  // Every deposit sent is accounted exactly once, with its amount.
  expect(rows.map((r) => r.txHash).sort(), 'every deposit accounted once').toEqual(
    [...ran.sent.keys()].sort(),
  );
  const units = (text: string) => parseUnits(text.replace(/\.?0+$/, '') || '0', rate.decimals)!;
  let paid = 0n;
  let kept = 0n;
  for (const r of rows) {
    const amount = units(r.amount);
    expect(amount).toBe(ran.sent.get(r.txHash));
    const refunded = r.refundAmount === null ? 0n : units(r.refundAmount);
    const held = r.heldAmount === null ? 0n : units(r.heldAmount);
    if (refunded > 0n) expect(r.refundTxHash, `${r.txHash} has its refund's hash`).toMatch(/^0x/);
    if (held > 0n || refunded > 0n) expect(r.reason, `${r.txHash} says why`).toBeTruthy();
    if (r.disposition === 'refunded') expect(refunded, `${r.txHash} refunded whole`).toBe(amount);
    if (r.disposition === 'held') expect(held, `${r.txHash} held whole`).toBe(amount);
    if (r.disposition === 'counted') {
      expect(r.countedInPayment, `${r.txHash} kept only when it counted`).toBe(true);
      expect(refunded + held < amount, `${r.txHash} keeps a part`).toBe(true);
    }
    if (r.countedInPayment) paid += amount;
    kept += amount - refunded - held;
  }
  const [row] = await db().select().from(transactions).where(eq(transactions.id, ran.transactionId));
  expect(String(row!.details.crypto_paid_amount), 'the paid amount is what counted').toBe(
    formatUnits(paid, rate.decimals),
  );
  const credits = (await ledgerOf(ran.transactionId)).filter((e) => e.step === 'credit');
  if (ran.result.status !== 'SUCCESS') {
    expect(credits, 'nothing credited for a failed transaction').toEqual([]);
    expect(kept, 'nothing kept of a failed transaction').toBe(0n);
    return;
  }
  const settings: ToleranceSettings = {
    assetTolerance:
      s.tolerance.kind === 'asset'
        ? formatUnits((BigInt(s.expectedUnits) * BigInt(s.tolerance.share)) / 1_000_000n, rate.decimals)
        : null,
    fiatTolerance: s.tolerance.kind === 'fiat' ? formatUnits(BigInt(s.tolerance.minor), 2) : null,
  };
  const status = classify(paid, BigInt(rate.expectedUnits), toleranceUnits(settings, rate));
  expect(row!.details.crypto_payment_status).toBe(status);
  if (s.kind === 'payin') {
    const credit = settledFiat(status, paid, rate, s.overpaid === 'keep');
    expect(
      credits.map((c) => c.amount),
      'credited what was received, at the locked rate',
    ).toEqual(credit > 0n ? [credit] : []);
  } else {
    expect(credits).toEqual([]);
  }
  const story = () =>
    JSON.stringify({ scenario: s, result: ran.result, details: row!.details, deposits: rows }, (_k, v) =>
      typeof v === 'bigint' ? String(v) : v,
    );
  if (status === 'OVERPAID' && s.overpaid === 'refund')
    expect(kept, `the excess went back: ${story()}`).toBe(BigInt(rate.expectedUnits));
  else expect(kept, `what counted was kept: ${story()}`).toBe(paid);
}

async function check(ran: Ran): Promise<void> {
  const s = ran.scenario;
  await checkWallets(ran);
  await checkProjectionAndWebhook(ran);
  if (s.kind === 'card') await checkCard(ran);
  if (s.kind === 'payout') await checkPayout(ran, s);
  if (s.kind === 'payin' || s.kind === 'offramp') await checkCrypto(ran, s);
  lane().checked += 1;
}

describe('money invariants under random interleavings (time-skipping, fast-check)', () => {
  it(`hold for ${RUNS * BATCH} generated transactions`, { timeout: 30 * 60_000 }, async () => {
    const seed = Number(process.env.MONEY_PROPERTY_SEED ?? Date.now() % 2 ** 31);
    const property = fc.asyncProperty(batch, async (scenarios) => {
      const runs: Promise<Ran>[] = [];
      for (const s of scenarios) {
        if (runs.length >= CONCURRENCY) await Promise.all(runs.slice(-CONCURRENCY));
        const merchant = await newMerchant(s);
        runs.push(runWatched(s, merchant, await start(s, merchant)));
      }
      for (const ran of await Promise.all(runs)) await check(ran);
      await checkForgedRuns();
    });
    // Lane i runs its share of the batches from seed + i: a failure names its lane's seed and path.
    const outcomes = await Promise.allSettled(
      lanes.map((l, i) => {
        const numRuns = Math.floor(RUNS / LANES) + (i < RUNS % LANES ? 1 : 0);
        console.log(`money invariants: lane ${i}, seed ${seed + i} (MONEY_PROPERTY_SEED replays it)`);
        return current.run(l, () =>
          fc.assert(property, {
            numRuns,
            seed: seed + i,
            endOnFailure: true,
            // MONEY_PROPERTY_PATH (with the seed) replays one failing batch only, as fast-check reports it.
            ...(process.env.MONEY_PROPERTY_PATH ? { path: process.env.MONEY_PROPERTY_PATH } : {}),
          }),
        );
      }),
    );
    const failed = outcomes.flatMap((o, i) =>
      o.status === 'rejected' ? [{ lane: i, error: o.reason }] : [],
    );
    for (const { lane, error } of failed.slice(1))
      console.error(`money invariants: lane ${lane} failed too (seed ${seed + lane}):`, error);
    if (failed[0]) throw failed[0].error;
    const checked = lanes.reduce((n, l) => n + l.checked, 0);
    const forgedRuns = lanes.reduce((n, l) => n + l.forgedRuns, 0);
    console.log(
      `money invariants: ${checked} generated transactions checked in ${LANES} lanes, ${forgedRuns} runs started by hand refused (seeds ${seed} to ${seed + LANES - 1})`,
    );
    expect(checked).toBeGreaterThanOrEqual(RUNS * BATCH);

    // Reconciliation over every lane's books finds nothing (docs/reconciliation.md): the ledger against
    // itself, the sandbox processors' books and the chain leg's counted deposits. (The Java test server lists
    // no workflows by query, so the projection is held against the workflows by the API, fault and cluster
    // tests instead.)
    const scope = { from: new Date(0), to: new Date(), transactionIds: [], references: [] };
    for (const l of lanes)
      for (const leg of reconciliationLegs(l.ts.database.db, { masterKey: l.ts.config.MASTER_KEY }))
        expect(await leg.check(scope), `reconciliation: ${leg.source}`).toEqual([]);
  });
});
