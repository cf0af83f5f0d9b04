import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asc, eq, sql } from 'drizzle-orm';
import { Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import proto from '@temporalio/proto';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { runCliIn } from '../helpers/cli';
import {
  cardRequest,
  merchantClient,
  payinRequest,
  payoutRequest,
  rampRequest,
  type MerchantClient,
} from '../helpers/merchant-client';
import { submitForm, withoutCard } from '../helpers/hosted-pages';
import {
  cryptoDeposits,
  ledgerEntries,
  opsActions,
  paymentLinks,
  sandboxOperations,
  transactions,
  wallets,
} from '../../src/db/schema/index';
import { dataConverter, sendUpdate } from '../../src/temporal/client';
import { changedInput, copyRun, type CopiedRun } from '../helpers/forged-runs';
import {
  NOT_AN_OPS_ACTION,
  NOT_THE_SERVICE_RUN,
  failureTypes,
  firstAnswerUpdate,
  forceFailUpdate,
  workflowIds,
} from '../../src/contracts';

/**
 * What an operator can do with the stock Temporal UI or CLI and the codec endpoint: read a paid
 * transaction's history (its start input, its updates and their proofs), start the same workflow again,
 * under the paid id or a new one, with that input copied and changed, and send it the updates copied from
 * the history; or Reset the paid run to any point. None of it moves money, changes a transaction, or is
 * left out of the audit trail (docs/operations.md, what binds a run).
 */
let env: TestEnv;
let merchant: MerchantClient;
let victim: MerchantClient;
/** The Temporal UI: the same server and payload codec, none of the service's keys or interceptors. */
let ui: Client;

beforeAll(async () => {
  env = await startTestEnv({ ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE_SECONDS: '600' });
  merchant = merchantClient(env.app, await env.createMerchant());
  victim = merchantClient(
    env.app,
    await env.createMerchant({ name: 'Other merchant', wallets: [{ currency: 'USD', amount: 0n }] }),
  );
  ui = new Client({
    connection: env.client.connection,
    dataConverter: dataConverter(env.config),
    identity: 'ops-eve@temporal-ui',
  });
});
afterAll(() => env?.close());

type Event = proto.temporal.api.history.v1.IHistoryEvent;

async function historyOf(workflowId: string, runId?: string): Promise<Event[]> {
  return (await env.client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
}

const copiedFrom = (workflowId: string, runId?: string) => copyRun(env.client, env.config, workflowId, runId);

/**
 * Everything money and transactions are made of, to compare before and after; with `versions`, the
 * projection's write versions too (a run a Reset started writes its final status again, unchanged).
 */
async function books({ versions = true } = {}) {
  const db = env.database.db;
  const rows = await db
    .select({
      id: transactions.id,
      status: transactions.status,
      message: transactions.message,
      version: transactions.version,
      refunded: transactions.refunded,
      chargeback: transactions.chargeback,
    })
    .from(transactions)
    .orderBy(asc(transactions.id));
  return {
    transactions: versions ? rows : rows.map(({ version: _version, ...row }) => row),
    ledger: await db.select().from(ledgerEntries).orderBy(asc(ledgerEntries.id)),
    wallets: await db
      .select({ id: wallets.id, available: wallets.available })
      .from(wallets)
      .orderBy(asc(wallets.id)),
    connectors: await db.select().from(sandboxOperations).orderBy(asc(sandboxOperations.idempotencyKey)),
    deposits: await db.select().from(cryptoDeposits).orderBy(asc(cryptoDeposits.txHash)),
    links: await db
      .select({ id: paymentLinks.id, status: paymentLinks.status, transactionId: paymentLinks.transactionId })
      .from(paymentLinks)
      .orderBy(asc(paymentLinks.id)),
  };
}

async function refusedRuns(): Promise<(typeof opsActions.$inferSelect)[]> {
  return env.database.db.select().from(opsActions).where(eq(opsActions.action, 'refusedRun'));
}

/** Starts a workflow as the UI or CLI would, sends it the copied updates, and answers how it ended. */
async function forge(
  type: string,
  workflowId: string,
  input: Record<string, unknown>,
  updates: CopiedRun['updates'],
) {
  const handle = await ui.workflow.start(type, {
    workflowId,
    taskQueue: env.config.TEMPORAL_TASK_QUEUE,
    args: [input],
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  });
  const answers: string[] = [];
  for (const update of [
    { name: firstAnswerUpdate.name, args: [] as unknown as CopiedRun['updates'][number]['args'] },
    ...updates,
  ]) {
    answers.push(
      await handle.executeUpdate(update.name, { args: update.args }).then(
        () => 'taken',
        () => 'refused',
      ),
    );
  }
  const failure = await handle.result().then(
    () => undefined,
    (error: WorkflowFailedError) => error.cause,
  );
  const scheduled = (await historyOf(workflowId, handle.firstExecutionRunId)).flatMap(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
  );
  return { runId: handle.firstExecutionRunId, answers, failure, scheduled };
}

function expectRefusedAtItsFirstStep(forged: Awaited<ReturnType<typeof forge>>, what: string) {
  expect(forged.failure, what).toBeInstanceOf(ApplicationFailure);
  expect((forged.failure as ApplicationFailure).type, what).toBe(failureTypes.notTheServiceRun);
  expect(forged.failure!.message, what).toContain(NOT_THE_SERVICE_RUN);
  expect(
    forged.answers.every((answer) => answer === 'refused'),
    `${what}: ${forged.answers}`,
  ).toBe(true);
  expect(forged.scheduled, `${what} scheduled nothing`).toEqual([]);
}

const walletOf = (client: MerchantClient) =>
  client.credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;

async function created(path: string, fields: Record<string, unknown>) {
  const response = await merchant.post(path, fields);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as { status: string; redirect_url: string; data: { transaction_id: string } };
}

async function statusOf(id: string) {
  return (await merchant.get(`/api/test/status/${id}`)).json() as { status: string };
}

async function paidPayin(): Promise<string> {
  const payin = await created('/api/v1/test/crypto/payin', payinRequest({ amount: 40 }));
  const id = payin.data.transaction_id;
  const rate = await env.database.db.select().from(transactions).where(eq(transactions.id, id));
  const amount = (rate[0]!.details as { crypto_amount: string }).crypto_amount;
  const deposit = await merchant.postPlain(`/api/v1/test/crypto/${id}/deposit`, { amount });
  expect(deposit.statusCode, deposit.body).toBe(200);
  await expect.poll(async () => (await statusOf(id)).status, { timeout: 15_000 }).toBe('SUCCESS');
  return id;
}

describe('a run started by hand, as the Temporal UI or CLI starts one', () => {
  it("credits nothing when a paid payin is started again with another merchant's wallet and 1,000 times the amount", async () => {
    const id = await paidPayin();
    const copied = await copiedFrom(id);
    expect(copied.updates.map((u) => u.name)).toEqual(['deposit']);
    const crypto = copied.input.crypto as { fiatMinor: string };
    const changed = {
      ...copied.input,
      walletId: walletOf(victim),
      crypto: { ...crypto, fiatMinor: String(BigInt(crypto.fiatMinor) * 1000n) },
    };
    const before = await books();

    const samePaidId = await forge(copied.type, id, changed, copied.updates);
    expectRefusedAtItsFirstStep(samePaidId, 'under the paid id');
    const newId = `PA${randomUUID().replaceAll('-', '')}`;
    const anotherId = await forge(copied.type, newId, { ...changed, transactionId: newId }, copied.updates);
    expectRefusedAtItsFirstStep(anotherId, 'under a new id');

    expect(await books(), 'no wallet, ledger, connector or projection moved').toEqual(before);
    const [wallet] = await env.database.db
      .select()
      .from(wallets)
      .where(eq(wallets.id, walletOf(victim)));
    expect(wallet!.available).toBe(0n);
    const audit = await refusedRuns();
    for (const [forged, transactionId] of [
      [samePaidId, id],
      [anotherId, newId],
    ] as const) {
      expect(audit.find((row) => row.key === `refused-run:${forged.runId}`)).toMatchObject({
        transactionId,
        actor: 'ops-eve@temporal-ui',
        action: 'refusedRun',
      });
    }
    expect(audit.find((row) => row.transactionId === id)?.reason).toContain('Another run was started');
    // Ops see the service's run of the paid transaction, not the refused one that ran last under its id,
    // and the refused runs under an id the service never used.
    const shown = await runCliIn(env, 'ops', 'show', id, '--json');
    expect(shown.code, shown.stderr).toBe(0);
    const paidRun = await env.database.db.select().from(transactions).where(eq(transactions.id, id));
    expect(JSON.parse(shown.stdout).workflow).toMatchObject({
      status: 'COMPLETED',
      run_id: paidRun[0]!.runId,
    });
    const stranger = await runCliIn(env, 'ops', 'show', newId, '--json');
    expect(stranger.code, stranger.stderr).toBe(0);
    expect(JSON.parse(stranger.stdout)).toMatchObject({
      projection: null,
      audit: [{ action: 'refusedRun', actor: 'ops-eve@temporal-ui' }],
    });
  });

  it('moves nothing for any kind of transaction, under its paid id or a new one, with every copied update', async () => {
    const walletId = walletOf(merchant);
    const workflows: string[] = [];
    // Card, without and with 3-D Secure.
    workflows.push((await created('/api/v1/test/card', cardRequest())).data.transaction_id);
    const challenged = await created('/api/v1/test/card', cardRequest({ card_number: '4111111111111111' }));
    await submitForm(env.app, challenged.redirect_url, { decision: 'approve' });
    workflows.push(challenged.data.transaction_id);
    // Hosted card (the card typed on our page, then 3-D Secure).
    const hosted = await created('/api/v1/test/hosted/card', withoutCard(cardRequest()));
    const entered = await submitForm(env.app, hosted.redirect_url, {
      card_number: '4111111111111111',
      card_expiry_month: '12',
      card_expiry_year: String(new Date().getUTCFullYear() + 2),
      card_cvv: '123',
    });
    await submitForm(env.app, entered.headers.location!, { decision: 'approve' });
    workflows.push(hosted.data.transaction_id);
    // APM.
    const apm = await created('/api/v1/test/apm', withoutCard(cardRequest()));
    const chosen = await submitForm(env.app, apm.redirect_url, { method: 'bank_redirect' });
    await submitForm(env.app, chosen.headers.location!, { decision: 'approve' });
    workflows.push(apm.data.transaction_id);
    // A payment link, paid by card.
    const template = await runCliIn(
      env,
      ...['templates', 'add', '--merchant', merchant.credentials.merchant_id, '--mode', 'test'],
      ...['--name', 'Forged', '--redirect-url', 'https://merchant.example/thanks', '--json'],
    );
    const link = await merchant.postPlain('/api/v1/payment-link', {
      payment_template_id: JSON.parse(template.stdout).payment_template_id,
      amount: 1200,
      currency: 'USD',
    });
    const linkUrl = link.json().data as string;
    const details = await submitForm(env.app, linkUrl, {
      first_name: 'Jane',
      last_name: 'Doe',
      email: 'jane@example.com',
      address: '1 Main Street',
      city: 'Madrid',
      state: 'M',
      zip: '28001',
      phone_number: '+34911234567',
      country: 'ES',
    });
    const linkCard = await submitForm(env.app, details.headers.location!, {
      card_number: '4242424242424242',
      card_expiry_month: '12',
      card_expiry_year: String(new Date().getUTCFullYear() + 2),
      card_cvv: '123',
    });
    workflows.push(new URL(linkCard.headers.location!).searchParams.get('transaction_id')!);
    workflows.push(workflowIds.paymentLink(new URL(linkUrl).pathname.split('/').pop()!));
    // Payout.
    workflows.push(
      (await created('/api/v1/test/payout', payoutRequest(walletId, { amount: 300 }))).data.transaction_id,
    );
    // Payin, refunded; and another, charged back.
    const refunded = await paidPayin();
    workflows.push(refunded);
    const refund = await merchant.postPlain('/api/v1/test/refund', {
      transaction_id: refunded,
      reason: 'asked',
    });
    expect(refund.statusCode, refund.body).toBe(200);
    workflows.push(workflowIds.aftercare(refunded));
    const chargedBack = await paidPayin();
    workflows.push(chargedBack);
    const chargeback = await merchant.postPlain('/api/v1/test/chargeback', { transaction_id: chargedBack });
    expect(chargeback.statusCode, chargeback.body).toBe(200);
    workflows.push(workflowIds.aftercare(chargedBack));
    // On-ramp (paid on the checkout page) and off-ramp (deposited).
    const onramp = await created('/api/v1/test/crypto', rampRequest());
    await submitForm(env.app, onramp.redirect_url, { decision: 'approve' });
    workflows.push(onramp.data.transaction_id);
    const offramp = await created(
      '/api/v1/test/crypto',
      rampRequest({ transaction_type: 'OFFRAMP', fiat_amount: undefined, crypto_amount: 50 }),
    );
    await merchant.postPlain(`/api/v1/test/crypto/${offramp.data.transaction_id}/deposit`, { amount: '50' });
    workflows.push(offramp.data.transaction_id);

    for (const id of workflows.filter((w) => w.startsWith('PA')))
      await expect.poll(async () => (await statusOf(id)).status, { timeout: 15_000 }).toBe('SUCCESS');
    const copies = await Promise.all(workflows.map(async (id) => ({ id, ...(await copiedFrom(id)) })));
    // Every internal update a customer, the chain or a merchant sends was among those copied.
    expect(new Set(copies.flatMap((c) => c.updates.map((u) => u.name)))).toEqual(
      new Set(['hostedDecision', 'cardEntered', 'apmMethod', 'linkUsed', 'deposit', 'refund', 'chargeback']),
    );
    // Let the paid runs' own steps settle (webhooks, the link's projection) before comparing.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = await books();
    const auditBefore = (await refusedRuns()).length;

    let forgedRuns = 0;
    for (const copy of copies) {
      const changed = changedInput(copy.input, walletOf(victim));
      const samePaidId = await forge(copy.type, copy.id, changed, copy.updates);
      expectRefusedAtItsFirstStep(samePaidId, `${copy.type} ${copy.id} under its paid id`);
      const newId = copy.id.startsWith('PA') ? `PA${randomUUID().replaceAll('-', '')}` : `${copy.id}-again`;
      const anotherId = await forge(
        copy.type,
        newId,
        copy.id.startsWith('PA') ? { ...changed, transactionId: newId } : changed,
        copy.updates,
      );
      expectRefusedAtItsFirstStep(anotherId, `${copy.type} ${copy.id} under a new id`);
      forgedRuns += 2;
    }
    expect(await books(), 'no wallet, ledger, connector call, deposit, link or projection moved').toEqual(
      before,
    );
    expect((await refusedRuns()).length - auditBefore, 'each forged run left an audit row').toBe(forgedRuns);
  });
});

const { ResetReapplyType } = proto.temporal.api.enums.v1;

describe('Reset by ops', () => {
  /** Resets `run` to the workflow task that completed at `eventId`, as ops would; answers the new run. */
  async function reset(
    workflowId: string,
    runId: string,
    eventId: proto.temporal.api.history.v1.IHistoryEvent['eventId'],
    identity = 'ops-alice',
    reapply = true,
  ): Promise<string> {
    const response = await env.client.workflowService.resetWorkflowExecution({
      namespace: env.config.TEMPORAL_NAMESPACE,
      workflowExecution: { workflowId, runId },
      reason: `${identity}: Reset to ${String(eventId)} by the test`,
      workflowTaskFinishEventId: eventId,
      requestId: randomUUID(),
      identity,
      ...(reapply ? {} : { resetReapplyType: ResetReapplyType.RESET_REAPPLY_TYPE_NONE }),
    });
    return response.runId;
  }

  it(
    'of a paid payout, to every workflow task of its history, pays and debits once and stays SUCCESS',
    { timeout: 240_000 },
    async () => {
      const walletId = walletOf(merchant);
      const [{ available: start } = { available: 0n }] = await env.database.db
        .select({ available: wallets.available })
        .from(wallets)
        .where(eq(wallets.id, walletId));
      const payout = await created('/api/v1/test/payout', payoutRequest(walletId, { amount: 300 }));
      expect(payout.status).toBe('SUCCESS');
      const id = payout.data.transaction_id;
      const paidRun = (await env.client.workflow.getHandle(id).describe()).runId;
      const tasks = (await historyOf(id, paidRun)).filter((e) => e.workflowTaskCompletedEventAttributes);
      // The payout answers from its first task, which sends: a Reset to it runs the send again.
      expect(tasks.length).toBeGreaterThanOrEqual(1);
      const before = await books({ versions: false });
      for (const task of tasks) {
        const newRun = await reset(id, paidRun, task.eventId!);
        const result = await env.client.workflow.getHandle(id, newRun).result();
        expect(result, `reset to ${String(task.eventId)}`).toEqual({
          status: 'SUCCESS',
          message: 'Transaction processed successfully.',
        });
        expect(await books({ versions: false }), `reset to ${String(task.eventId)}`).toEqual(before);
      }
      const paid = before.connectors.filter((op) => op.idempotencyKey.startsWith(`${id}:`));
      expect(paid.map((op) => op.state)).toEqual(['paid']);
      expect(
        before.ledger.filter((entry) => entry.reference === id).map((entry) => [entry.step, entry.amount]),
      ).toEqual([
        ['reserve', -300n],
        ['settle', 0n],
      ]);
      const [{ available } = { available: 0n }] = await env.database.db
        .select({ available: wallets.available })
        .from(wallets)
        .where(eq(wallets.id, walletId));
      expect(available).toBe(start - 300n);
      // Each new run that acted was recorded with who Reset it.
      const resets = await env.database.db
        .select()
        .from(opsActions)
        .where(sql`${opsActions.transactionId} = ${id} and ${opsActions.action} = 'reset'`);
      expect(resets.length).toBeGreaterThan(0);
      expect(new Set(resets.map((row) => row.actor))).toEqual(new Set(['ops-alice']));
    },
  );

  it('refuses a proof copied from the run it replaced, yet counts what that run counted, once', async () => {
    const payin = await created('/api/v1/test/crypto/payin', payinRequest({ amount: 40 }));
    const id = payin.data.transaction_id;
    const first = (await env.client.workflow.getHandle(id).describe()).runId;
    const deposit = await merchant.postPlain(`/api/v1/test/crypto/${id}/deposit`, { amount: '1' });
    expect(deposit.json().deposit).toMatchObject({ disposition: 'counted' });
    const events = await historyOf(id, first);
    const accepted = events.findIndex(
      (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'deposit',
    );
    const taskBefore = events.slice(0, accepted).findLast((e) => e.workflowTaskCompletedEventAttributes)!;
    const { updates } = await copiedFrom(id, first);
    // The deposit came after the Reset's point, and is not reapplied: the new run never took it.
    const newRun = await reset(id, first, taskBefore.eventId!, 'ops-alice', false);
    const copiedDeposit = updates.find((u) => u.name === 'deposit')!;
    const refused = await ui.workflow
      .getHandle(id, newRun)
      .executeUpdate('deposit', { args: copiedDeposit.args })
      .then(
        () => 'taken',
        (error: Error & { cause?: Error }) => error.cause?.message,
      );
    expect(refused).toBe(NOT_AN_OPS_ACTION);
    // The service's own deposit reaches the new run, with a proof for it.
    const again = await merchant.postPlain(`/api/v1/test/crypto/${id}/deposit`, { amount: '2' });
    expect(again.json().deposit).toMatchObject({ disposition: 'counted' });
    // Stopped by ops: both deposits go back, the one the replaced run counted among them, each once.
    const stopped = await sendUpdate(env.client, id, forceFailUpdate, {
      reason: 'Stopped.',
      actor: 'ops-alice',
    });
    expect(stopped).toMatchObject({ kind: 'done', result: { status: 'FAILED' } });
    const rows = await env.database.db
      .select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, id));
    expect(rows.map((row) => [row.disposition, row.refundAmount?.replace(/\.?0+$/, '')]).sort()).toEqual([
      ['refunded', '1'],
      ['refunded', '2'],
    ]);
  });
});
