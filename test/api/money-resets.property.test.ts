/**
 * Reset, the one Temporal UI action that reruns a transaction's workflow from a point of its history, can
 * never move money twice nor change a final status (docs/operations.md, what Reset may do). fast-check
 * draws transactions of every kind, paid or refused through the API, then Resets the finished run to a
 * random workflow task, with or without the updates after it reapplied; a new run that waits (for a
 * customer or deposits the Reset dropped) is stopped by ops, as they would. After each, the transaction's
 * money is as it was: the ledger, the connectors' books, the deposits, the projection and the run's own
 * result. On the dev server, since the time-skipping server has no Reset. `RESET_PROPERTY_RUNS` sets how
 * many transactions (default 40).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { asc, eq, like } from 'drizzle-orm';
import proto from '@temporalio/proto';
import { startTestEnv, type TestEnv } from '../helpers/env';
import {
  cardRequest,
  merchantClient,
  payinRequest,
  payoutRequest,
  rampRequest,
  type MerchantClient,
} from '../helpers/merchant-client';
import { submitForm } from '../helpers/hosted-pages';
import {
  cryptoDeposits,
  ledgerEntries,
  sandboxOperations,
  transactions,
  wallets,
} from '../../src/db/schema/index';
import { sendUpdate } from '../../src/temporal/client';
import { forceFailUpdate, type FirstAnswer } from '../../src/contracts';

const RUNS = Number(process.env.RESET_PROPERTY_RUNS ?? 40);
const { ResetReapplyType } = proto.temporal.api.enums.v1;

type Scenario =
  | { kind: 'card'; pan: '4242424242424242' | '4000000000000002' }
  | { kind: '3ds'; decision: 'approve' | 'decline' }
  | { kind: 'payout'; pan: '4222222222222222' | '4333333333333333' }
  | { kind: 'payout verification'; decision: 'approve' | 'decline' }
  | { kind: 'payin'; share: number }
  | { kind: 'onramp'; decision: 'approve' | 'decline' }
  | { kind: 'offramp'; share: number };

const decision = fc.constantFrom<'approve' | 'decline'>('approve', 'decline');
/** Paid amounts, in percent of what is due: under, exact, over. */
const share = fc.constantFrom(40, 100, 150);
const scenario: fc.Arbitrary<Scenario> = fc.oneof(
  fc.record({
    kind: fc.constant('card' as const),
    pan: fc.constantFrom('4242424242424242', '4000000000000002'),
  }),
  fc.record({ kind: fc.constant('3ds' as const), decision }),
  fc.record({
    kind: fc.constant('payout' as const),
    pan: fc.constantFrom('4222222222222222', '4333333333333333'),
  }),
  fc.record({ kind: fc.constant('payout verification' as const), decision }),
  fc.record({ kind: fc.constant('payin' as const), share }),
  fc.record({ kind: fc.constant('onramp' as const), decision }),
  fc.record({ kind: fc.constant('offramp' as const), share }),
);
/** Where to Reset, as a fraction of the run's workflow tasks, and whether the later updates are reapplied. */
const resetPoint = fc.record({
  at: fc.double({ min: 0, max: 1, noNaN: true }),
  reapply: fc.boolean(),
});

let env: TestEnv;
let merchant: MerchantClient;
let walletId: string;
let resets = 0;

beforeAll(async () => {
  env = await startTestEnv({ ALLOW_PRIVATE_URLS: 'true' });
  merchant = merchantClient(env.app, await env.createMerchant());
  walletId = merchant.credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
});
afterAll(() => env?.close());

async function create(path: string, fields: Record<string, unknown>) {
  const response = await merchant.post(path, fields);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as { status: string; redirect_url: string; data: { transaction_id: string } };
}

async function statusOf(id: string): Promise<string> {
  return ((await merchant.get(`/api/test/status/${id}`)).json() as { status: string }).status;
}

async function deposit(id: string, percent: number): Promise<void> {
  const [row] = await env.database.db.select().from(transactions).where(eq(transactions.id, id));
  const due = (row!.details as { crypto_amount: string }).crypto_amount;
  const [whole, fraction = ''] = due.split('.');
  const units = BigInt(whole! + fraction.padEnd(6, '0').slice(0, 6));
  const paid = (units * BigInt(percent)) / 100n;
  const amount = `${paid / 1_000_000n}.${String(paid % 1_000_000n).padStart(6, '0')}`;
  const sent = await merchant.postPlain(`/api/v1/test/crypto/${id}/deposit`, { amount });
  expect(sent.statusCode, sent.body).toBe(200);
}

/** Creates the transaction through the API and takes it to its end as its customer would. */
async function settle(s: Scenario): Promise<string> {
  switch (s.kind) {
    case 'card':
      return (await create('/api/v1/test/card', cardRequest({ card_number: s.pan }))).data.transaction_id;
    case '3ds': {
      const created = await create('/api/v1/test/card', cardRequest({ card_number: '4111111111111111' }));
      await submitForm(env.app, created.redirect_url, { decision: s.decision });
      return created.data.transaction_id;
    }
    case 'payout':
      return (
        await create('/api/v1/test/payout', payoutRequest(walletId, { card_number: s.pan, amount: 200 }))
      ).data.transaction_id;
    case 'payout verification': {
      const created = await create(
        '/api/v1/test/payout',
        payoutRequest(walletId, { card_number: '4000000000003220', amount: 200 }),
      );
      await submitForm(env.app, created.redirect_url, { decision: s.decision });
      return created.data.transaction_id;
    }
    case 'payin': {
      const id = (await create('/api/v1/test/crypto/payin', payinRequest({ amount: 30 }))).data
        .transaction_id;
      await deposit(id, s.share);
      return id;
    }
    case 'onramp': {
      const created = await create('/api/v1/test/crypto', rampRequest({ fiat_amount: 30 }));
      await submitForm(env.app, created.redirect_url, { decision: s.decision });
      return created.data.transaction_id;
    }
    case 'offramp': {
      const created = await create(
        '/api/v1/test/crypto',
        rampRequest({ transaction_type: 'OFFRAMP', fiat_amount: undefined, crypto_amount: 25 }),
      );
      await deposit(created.data.transaction_id, s.share);
      return created.data.transaction_id;
    }
  }
}

/** Waits for the transaction's final status; an underpayment, which waits out its window, ops end. */
async function settled(id: string): Promise<void> {
  const final = /^(SUCCESS|FAILED|BLOCKED)$/;
  for (const deadline = Date.now() + 3_000; Date.now() < deadline;) {
    if (final.test(await statusOf(id))) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await sendUpdate(env.client, id, forceFailUpdate, { reason: 'Ended by ops.', actor: 'property' });
  await expect.poll(() => statusOf(id), { timeout: 15_000 }).toMatch(final);
}

/** What the transaction's money and status are made of. */
async function booksOf(id: string) {
  const db = env.database.db;
  const [row] = await db
    .select({ status: transactions.status, message: transactions.message, refunded: transactions.refunded })
    .from(transactions)
    .where(eq(transactions.id, id));
  return {
    row,
    ledger: await db
      .select({ walletId: ledgerEntries.walletId, step: ledgerEntries.step, amount: ledgerEntries.amount })
      .from(ledgerEntries)
      .where(eq(ledgerEntries.reference, id))
      .orderBy(asc(ledgerEntries.id)),
    connectors: await db
      .select({ key: sandboxOperations.idempotencyKey, state: sandboxOperations.state })
      .from(sandboxOperations)
      .where(like(sandboxOperations.idempotencyKey, `%${id}%`))
      .orderBy(asc(sandboxOperations.idempotencyKey)),
    deposits: await db
      .select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, id))
      .orderBy(asc(cryptoDeposits.txHash)),
    wallet: (
      await db.select({ available: wallets.available }).from(wallets).where(eq(wallets.id, walletId))
    )[0],
  };
}

/**
 * Resets the latest run to a workflow task of its history, as ops would; stops the new run when it waits
 * (for a customer's answer or a deposit the Reset dropped), as ops would; answers how the new run ended.
 */
async function resetAndEnd(id: string, point: { at: number; reapply: boolean }): Promise<FirstAnswer> {
  const latest = (await env.client.workflow.getHandle(id).describe()).runId;
  const history = await env.client.workflow.getHandle(id, latest).fetchHistory();
  const tasks = (history.events ?? []).filter((e) => e.workflowTaskCompletedEventAttributes);
  const task = tasks[Math.min(tasks.length - 1, Math.floor(point.at * tasks.length))]!;
  const { runId } = await env.client.workflowService.resetWorkflowExecution({
    namespace: env.config.TEMPORAL_NAMESPACE,
    workflowExecution: { workflowId: id, runId: latest },
    reason: `property: reset to ${String(task.eventId)}`,
    workflowTaskFinishEventId: task.eventId,
    requestId: randomUUID(),
    resetReapplyType: point.reapply
      ? ResetReapplyType.RESET_REAPPLY_TYPE_ALL_ELIGIBLE
      : ResetReapplyType.RESET_REAPPLY_TYPE_NONE,
  });
  resets += 1;
  const handle = env.client.workflow.getHandle(id, runId);
  const ended = await Promise.race([
    handle.result() as Promise<FirstAnswer>,
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2_000)),
  ]);
  if (ended) return ended;
  await sendUpdate(
    env.client,
    id,
    forceFailUpdate,
    { reason: 'Stopped after a Reset.', actor: 'property' },
    runId,
  );
  return (await handle.result()) as FirstAnswer;
}

describe('Reset of any transaction to any point (dev server, fast-check)', () => {
  it(
    `moves no money twice and changes no final status, over ${RUNS} transactions`,
    { timeout: 20 * 60_000 },
    async () => {
      const seed = Number(process.env.RESET_PROPERTY_SEED ?? Date.now() % 2 ** 31);
      console.log(`money resets: seed ${seed} (RESET_PROPERTY_SEED replays it)`);
      await fc.assert(
        fc.asyncProperty(
          scenario,
          fc.array(resetPoint, { minLength: 1, maxLength: 2 }),
          async (s, points) => {
            const id = await settle(s);
            await settled(id);
            // The run's own steps after its final move (its webhook) are done once its workflow is.
            await env.client.workflow.getHandle(id).result();
            const before = await booksOf(id);
            for (const point of points) {
              const result = await resetAndEnd(id, point);
              const after = await booksOf(id);
              expect(after, `${JSON.stringify(s)} reset at ${point.at}`).toEqual(before);
              expect(result, 'the new run ends as the transaction stands').toEqual({
                status: before.row!.status,
                message: before.row!.message,
              });
            }
          },
        ),
        { numRuns: RUNS, seed, endOnFailure: true },
      );
      console.log(`money resets: ${RUNS} transactions, ${resets} Resets, nothing moved twice (seed ${seed})`);
    },
  );
});
