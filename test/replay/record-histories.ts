/**
 * Records workflow histories for the replay test (`npm run record:histories`): every workflow kind, some
 * finished and some paused where they wait (mid-challenge, mid-verification, mid-settlement, mid-webhook-
 * retry). Run it after a workflow change, so the next change is checked against it too; the histories of
 * earlier code stay until the patches they cover are removed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { afterAll, beforeAll, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { sendAftercare } from '../../src/transactions/aftercare';
import proto from '@temporalio/proto';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { startWithStopWaiting } from '../helpers/update-admitted';
import {
  insertCardTransaction,
  insertPayinTransaction,
  insertPayoutTransaction,
  insertRampTransaction,
} from '../helpers/fixtures';
import { webhookEvents } from '../../src/db/schema/index';
import { prepareRedelivery } from '../../src/transactions/webhook-events';
import { startWithFirstAnswer } from '../../src/temporal/client';
import {
  SEND_NOTED_WITHIN_MS,
  depositUpdate,
  firstAnswerUpdate,
  stateQuery,
  forceFailUpdate,
  hostedDecisionUpdate,
  retryNowUpdate,
  type CardPayoutInput,
  workflowIds,
  type WorkflowName,
} from '../../src/contracts';
import { createMerchant, type MerchantCredentials } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';
import { REPLAY_PAYLOAD_KEYS, historiesDir } from './fixture-keys';

let env: TestEnv;
/** Card payments whose first authorization attempt is held up past its bound. */
const late = new Set<string>();
let merchant: MerchantCredentials;
let failing = true;
const endpoint = createServer((request, response) => {
  request.resume();
  response.statusCode = failing ? 503 : 200;
  response.end();
});
let endpointUrl = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  const address = endpoint.address();
  endpointUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hooks`;
  env = await startTestEnv(
    {
      PAYLOAD_KEYS: REPLAY_PAYLOAD_KEYS,
      WEBHOOK_RETRY_SCHEDULE_SECONDS: '2',
      WEBHOOK_RETRY_WINDOW_SECONDS: '3600',
    },
    {
      // A card authorization whose first attempt starts past its bound (a stalled worker): `late`.
      wrap: (real) => ({
        authorizeCard: async (input) => {
          if (late.delete(input.transactionId))
            await new Promise((resolve) => setTimeout(resolve, SEND_NOTED_WITHIN_MS + 1_000));
          return real.authorizeCard(input);
        },
      }),
    },
  );
  merchant = await env.createMerchant();
  mkdirSync(historiesDir, { recursive: true });
});
afterAll(async () => {
  await env?.close();
  endpoint.close();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function start<T extends { transactionId: string }>(
  name: WorkflowName,
  input: T,
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  const handle = await env.client.workflow.start(name, {
    workflowId: input.transactionId,
    taskQueue: env.config.TEMPORAL_TASK_QUEUE,
    args: [input],
  });
  await handle.executeUpdate(firstAnswerUpdate);
  return handle;
}

/**
 * What the new files are named after (`<name>.<label>.history`), so they sit next to those of earlier
 * code: `HISTORIES_LABEL`, or today's date.
 */
const label = process.env.HISTORIES_LABEL ?? new Date().toISOString().slice(0, 10);

/** `HISTORIES_ONLY=name,name`: writes only these (a new scenario's, beside the kept ones); all when unset. */
const only = process.env.HISTORIES_ONLY?.split(',').map((name) => name.trim());

/**
 * Starts a payout of the sandbox's outage card and waits for its backoff. Started without asking for a
 * first answer (it waits for the send; the API answers PENDING). Waited for by reading the history, not by
 * a query: a query that lands while the first task runs can cut it (docs/architecture.md, where a patch is
 * asked), and this scenario is to record the path it names, not a cut.
 */
async function payoutInBackoff(input: CardPayoutInput): Promise<WorkflowHandle> {
  const handle = await env.client.workflow.start('cardPayout', {
    workflowId: input.transactionId,
    taskQueue: env.config.TEMPORAL_TASK_QUEUE,
    args: [input],
  });
  const timerStarted = proto.temporal.api.enums.v1.EventType.EVENT_TYPE_TIMER_STARTED;
  for (let tries = 0; ; tries++) {
    const { events } = await handle.fetchHistory();
    if (events?.some((event) => event.eventType === timerStarted)) return handle;
    if (tries > 100) throw new Error('the payout never waited in its backoff');
    await pause(100);
  }
}

/**
 * Starts payouts, querying each through its first 100 ms, until the server cuts one's first task right
 * after the binding step's local activity: the shape that fails replay for a patch first asked there
 * (docs/architecture.md, where a patch is asked). About one payout in four is cut so here.
 */
async function payoutWithFirstTaskCut(payout: () => Promise<CardPayoutInput>): Promise<WorkflowHandle> {
  const { EventType } = proto.temporal.api.enums.v1;
  for (let tries = 0; tries < 60; tries++) {
    const input = await payout();
    // Started as the API starts it, by update-with-start.
    const answered = startWithFirstAnswer(env.client, {
      workflow: 'cardPayout',
      input,
      taskQueue: env.config.TEMPORAL_TASK_QUEUE,
      searchAttributes: [],
      timeoutMs: 10_000,
      onLateError: () => undefined,
    });
    const handle = env.client.workflow.getHandle(workflowIds.transaction(input.transactionId));
    const queries: Promise<unknown>[] = [];
    for (let query = 0; query < 20; query++) {
      queries.push(handle.query(stateQuery).catch(() => undefined));
      await pause(5);
    }
    await Promise.all([answered, ...queries]);
    await handle.result();
    const events = (await handle.fetchHistory()).events ?? [];
    const secondTask = events.findIndex(
      (event, at) => at > 2 && event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    );
    const marker = events[secondTask - 1]?.markerRecordedEventAttributes;
    const cutAfterBinding =
      marker?.markerName === 'core_local_activity' &&
      Buffer.from(marker.details?.data?.payloads?.[0]?.data ?? [])
        .toString()
        .includes('"bindRun"');
    if (cutAfterBinding) return handle;
  }
  throw new Error('no payout had its first task cut after the binding step');
}

/** Saves the history as it stands; a running workflow is recorded where it waits. */
async function save(name: string, handle: WorkflowHandle, until: 'finished' | 'waiting'): Promise<void> {
  if (until === 'finished') await handle.result();
  else {
    await handle.describe();
    await pause(500);
  }
  if (only && !only.includes(name)) return;
  const history = proto.temporal.api.history.v1.History.encode(await handle.fetchHistory()).finish();
  writeFileSync(`${historiesDir}/${name}.${label}.history`, history);
}

const key = () => env.config.MASTER_KEY;

it('records the histories', { timeout: 180_000 }, async () => {
  const card = async (pan: string) => insertCardTransaction(env.database.db, key(), merchant, { pan });
  const frictionless = await start('cardPayment', await card('4242424242424242'));
  await save('card-frictionless', frictionless, 'finished');
  const aftercare = await sendAftercare(
    { db: env.database.db, temporal: env.client, config: env.config },
    frictionless.workflowId,
    'refund',
    { reason: 'Customer request', actor: 'merchant:recording' },
  );
  if (!('applied' in aftercare)) throw new Error(`the refund was refused: ${aftercare.refused}`);
  await save(
    'aftercare-card-refunded',
    env.client.workflow.getHandle(workflowIds.aftercare(frictionless.workflowId)),
    'finished',
  );
  await save('card-cascade', await start('cardPayment', await card('4000000000000119')), 'finished');
  await save('card-answer-lost', await start('cardPayment', await card('4000000000000770')), 'finished');
  await save('card-mid-challenge', await start('cardPayment', await card('4111111111111111')), 'waiting');
  const approved = await start('cardPayment', await card('4111111111111111'));
  await approved.executeUpdate(hostedDecisionUpdate, { args: ['approve'] });
  await save('card-challenge-approved', approved, 'finished');
  const cancelled = await start('cardPayment', await card('5555555555554444'));
  await cancelled.cancel();
  await save('card-cancelled-mid-challenge', cancelled, 'finished');
  // Hosted: the customer is sent to our page and the workflow waits for the card typed there.
  const hosted = (challengeTimeoutSeconds: number) =>
    insertCardTransaction(env.database.db, key(), merchant, {
      pan: '4242424242424242',
      hosted: true,
      challengeTimeoutSeconds,
    });
  await save('card-hosted-waiting-for-card', await start('cardPayment', await hosted(600)), 'waiting');
  await save('card-hosted-abandoned', await start('cardPayment', await hosted(1)), 'finished');
  // A merchant with no card terminal: the payment closes its authorizations and ends without one.
  const noCardTerminal = await createMerchant(env.database.db, key(), {
    name: 'No card terminal',
    wallets: [],
    terminals: SANDBOX_TERMINALS.filter((terminal) => !terminal.kinds.includes('card')),
  });
  const unrouted = await insertCardTransaction(env.database.db, key(), noCardTerminal, {
    pan: '4242424242424242',
  });
  await save('card-no-terminal', await start('cardPayment', unrouted), 'finished');
  const slow = await card('4242424242424242');
  late.add(slow.transactionId);
  await save('card-late-attempt', await start('cardPayment', slow), 'finished');
  // Stopped before its first task: the payment closes its authorizations and asks before it fails.
  const { handle: stoppedHandle, stop } = await startWithStopWaiting(
    env,
    'cardPayment',
    await card('4242424242424242'),
  );
  await stop;
  await save('card-stopped-while-routing', stoppedHandle, 'finished');

  const payout = async (pan: string) => insertPayoutTransaction(env.database.db, key(), merchant, { pan });
  await save('payout-paid', await start('cardPayout', await payout('4222222222222222')), 'finished');
  await save('payout-declined', await start('cardPayout', await payout('4333333333333333')), 'finished');
  await save(
    'payout-send-answer-lost',
    await start('cardPayout', await payout('4000000000003261')),
    'finished',
  );
  await save(
    'payout-mid-verification',
    await start('cardPayout', await payout('4000000000003220')),
    'waiting',
  );
  // Waiting in its backoff for ops (the sandbox's outage card), then retried now: `retryNow`'s own path.
  const retried = await payoutInBackoff(await payout('4000000000003287'));
  await retried.executeUpdate(retryNowUpdate, { args: [{ actor: 'recording' }] });
  await save('payout-retried-by-ops', retried, 'finished');
  // Stopped by ops in the backoff after a refused round: its ending asks about the refused keys.
  const stoppedInBackoff = await payoutInBackoff(await payout('4000000000003287'));
  await stoppedInBackoff.executeUpdate(forceFailUpdate, {
    args: [{ reason: 'Stopped by ops.', actor: 'recording' }],
  });
  await save('payout-stopped-after-refused-round', stoppedInBackoff, 'finished');
  const verified = await start('cardPayout', await payout('4000000000003279'));
  await verified.executeUpdate(hostedDecisionUpdate, { args: ['approve'] });
  await save('payout-confirmation-answer-lost', verified, 'finished');

  const onramp = await start('cryptoRamp', await insertRampTransaction(env.database.db, merchant, 'ONRAMP'));
  await save('onramp-waiting-for-payment', onramp, 'waiting');
  const paidOnramp = await start(
    'cryptoRamp',
    await insertRampTransaction(env.database.db, merchant, 'ONRAMP'),
  );
  await paidOnramp.executeUpdate(hostedDecisionUpdate, { args: ['approve'] });
  await save('onramp-paid', paidOnramp, 'finished');
  const offramp = await start(
    'cryptoRamp',
    await insertRampTransaction(env.database.db, merchant, 'OFFRAMP'),
  );
  await offramp.executeUpdate(depositUpdate, { args: [{ txHash: 'part', units: '40000000', sender: 'T1' }] });
  await save('offramp-mid-settlement', offramp, 'waiting');
  const settled = await start(
    'cryptoRamp',
    await insertRampTransaction(env.database.db, merchant, 'OFFRAMP'),
  );
  await settled.executeUpdate(depositUpdate, { args: [{ txHash: 'all', units: '100000000', sender: 'T2' }] });
  await save('offramp-settled', settled, 'finished');

  const payin = await start('cryptoPayin', await insertPayinTransaction(env.database.db, merchant));
  await payin.executeUpdate(depositUpdate, { args: [{ txHash: 'a', units: '60000000', sender: 'T3' }] });
  await payin.executeUpdate(depositUpdate, { args: [{ txHash: 'b', units: '60000000', sender: 'T4' }] });
  await save('payin-overpaid', payin, 'finished');
  const expiring = await insertPayinTransaction(env.database.db, merchant, { depositWindowSeconds: 2 });
  const underpaid = await start('cryptoPayin', expiring);
  await underpaid.executeUpdate(depositUpdate, { args: [{ txHash: 'c', units: '10000000', sender: 'T5' }] });
  await save('payin-underpaid-refunded', underpaid, 'finished');

  // A webhook endpoint that fails, then recovers.
  const withHook = await insertCardTransaction(env.database.db, key(), merchant, {
    pan: '4242424242424242',
    webhookUrl: endpointUrl,
  });
  await (await start('cardPayment', withHook)).result();
  const [event] = await env.database.db
    .select()
    .from(webhookEvents)
    .where(eq(webhookEvents.transactionId, withHook.transactionId));
  const delivery = env.client.workflow.getHandle(workflowIds.webhook(event!.id, 0));
  await pause(3000);
  await save('webhook-mid-retry', delivery, 'waiting');
  await save(
    'card-webhook-first-attempt-failed',
    env.client.workflow.getHandle(withHook.transactionId),
    'finished',
  );
  failing = false;
  await save('webhook-delivered-after-retries', delivery, 'finished');

  // A redelivery of that event, and of another card's: their first attempts in one batch.
  const other = await insertCardTransaction(env.database.db, key(), merchant, {
    pan: '4242424242424242',
    webhookUrl: endpointUrl,
  });
  await (await start('cardPayment', other)).result();
  await save(
    'card-webhook-delivered-at-once',
    env.client.workflow.getHandle(other.transactionId),
    'finished',
  );
  const schedule = { delaysSeconds: [1], windowSeconds: 5 };
  const runs = [
    ...(await prepareRedelivery(env.database.db, event!.id, schedule)),
    ...(await prepareRedelivery(env.database.db, other.transactionId, schedule)),
  ];
  const batch = await env.client.workflow.start('webhookRedelivery', {
    workflowId: workflowIds.webhookRedelivery(runs),
    taskQueue: env.config.TEMPORAL_TASK_QUEUE,
    args: [{ runs }],
  });
  await save('webhook-redelivery-batch', batch, 'finished');

  // A reconciliation run over all of the above (docs/reconciliation.md).
  const reconciliation = await env.client.workflow.start('reconciliation', {
    workflowId: workflowIds.reconciliationRun('recording'),
    taskQueue: env.config.TEMPORAL_TASK_QUEUE,
    args: [{ trigger: 'recording' }],
  });
  await save('reconciliation-run', reconciliation, 'finished');

  // Last: it starts payouts until the server cuts one's first task, and a run that never sees such a cut
  // fails here without losing the scenarios above.
  if (!only || only.includes('payout-first-task-cut'))
    await save(
      'payout-first-task-cut',
      await payoutWithFirstTaskCut(() => payout('4222222222222222')),
      'finished',
    );
});
