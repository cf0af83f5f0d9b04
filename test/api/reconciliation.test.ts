import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, asc, eq, sql } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { runCliIn } from '../helpers/cli';
import { cardRequest, merchantClient, payoutRequest, type MerchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver } from '../helpers/webhook-receiver';
import {
  cryptoDeposits,
  ledgerEntries,
  reconciliationBreakEvents,
  reconciliationBreaks,
  sandboxOperations,
  transactions,
  wallets,
  webhookEvents,
} from '../../src/db/schema/index';
import { runReconciliation } from '../../src/temporal/reconciliation';
import { ledgerLeg } from '../../src/reconciliation/ledger';
import { creditWallet } from '../../src/wallets/ledger';
import { insertPayinTransaction } from '../helpers/fixtures';
import { registerOpenBreaks } from '../../src/reconciliation/metrics';
import { Registry } from 'prom-client';

/**
 * Reconciliation (docs/reconciliation.md) on the real workflows and the sandbox processors' books: a clean
 * run over real transactions finds nothing; each break put in by hand is found once, stays one row however
 * often it is found, and is resolved by the first run after it is put right, or accepted by ops.
 */
let env: TestEnv;
let merchant: MerchantClient;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  // No lag: what the test just did is inside the window of the run it asks for.
  env = await startTestEnv({ RECONCILIATION_LAG_SECONDS: '0' });
  merchant = merchantClient(env.app, await env.createMerchant());
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await env?.close();
});

const usdWallet = () =>
  merchant.credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;

/** Runs reconciliation now and answers the unsettled breaks, as `source/kind/reference` in order. */
async function reconcile(options: { since?: string; until?: string } = {}) {
  const run = await runReconciliation(env.client, {
    taskQueue: env.config.TEMPORAL_TASK_QUEUE,
    actor: 'test',
    ...options,
  });
  const open = await env.database.db
    .select()
    .from(reconciliationBreaks)
    .where(sql`${reconciliationBreaks.state} in ('open', 'acknowledged')`)
    .orderBy(asc(reconciliationBreaks.id));
  return { ...run, open: open.map((b) => `${b.source}/${b.kind}/${b.reference}`).sort(), rows: open };
}

async function card(overrides: Record<string, unknown> = {}): Promise<string> {
  const created = await merchant.post(
    '/api/v1/test/card',
    cardRequest({ webhook_url: receiver.url, ...overrides }),
  );
  expect(created.statusCode, created.body).toBe(200);
  return created.json().data.transaction_id;
}

async function eventsOf(reference: string) {
  const [row] = await env.database.db
    .select()
    .from(reconciliationBreaks)
    .where(eq(reconciliationBreaks.reference, reference));
  const events = await env.database.db
    .select()
    .from(reconciliationBreakEvents)
    .where(eq(reconciliationBreakEvents.breakId, row!.id))
    .orderBy(asc(reconciliationBreakEvents.id));
  return {
    row: row!,
    events: events.map((e) => `${e.action} by ${e.actor.startsWith('recon:') ? 'a run' : e.actor}`),
  };
}

async function until(what: string, probe: () => Promise<boolean>) {
  await expect.poll(probe, { timeout: 30_000, interval: 200, message: what }).toBe(true);
}

describe('reconciliation', () => {
  it('finds nothing after real payments, payouts, declines and refunds', async () => {
    const paid = await card();
    await card({ card_number: '4000000000000002' });
    const refunded = await card();
    const refund = await merchant.postPlain('/api/v1/test/refund?Skip-Encryption=true', {
      transaction_id: refunded,
      reason: 'Customer request',
    });
    expect(refund.statusCode, refund.body).toBe(200);
    await merchant.post('/api/v1/test/payout', payoutRequest(usdWallet(), { webhook_url: receiver.url }));
    await merchant.post(
      '/api/v1/test/payout',
      payoutRequest(usdWallet(), { card_number: '4333333333333333', webhook_url: receiver.url }),
    );
    const statusOf = async (id: string) =>
      (await env.database.db.select().from(transactions).where(eq(transactions.id, id)))[0]!;
    await until('the refund to land', async () => (await statusOf(refunded)).refunded);
    await until('every webhook event to be made', async () => {
      const rows = await env.database.db.select().from(transactions);
      const events = await env.database.db.select().from(webhookEvents);
      return rows.every(
        (t) => !['SUCCESS', 'FAILED'].includes(t.status) || events.some((e) => e.transactionId === t.id),
      );
    });
    expect((await statusOf(paid)).status).toBe('SUCCESS');

    const first = await reconcile();
    expect(first.open).toEqual([]);
    expect(first.summary.sources.ledger!.found).toBe(0);
    expect(first.summary.sources.sandbox!.found).toBe(0);
  });

  it('reports a ledger entry inserted by hand once, and resolves it once it is removed', async () => {
    await env.database.db.transaction(async (tx) => {
      await tx
        .insert(ledgerEntries)
        .values({ walletId: usdWallet(), reference: 'by-hand', step: 'credit', amount: 500n });
      await tx
        .update(wallets)
        .set({ available: sql`${wallets.available} + 500` })
        .where(eq(wallets.id, usdWallet()));
    });
    const reference = `${usdWallet()}:by-hand:credit`;
    expect((await reconcile()).open).toEqual([`ledger/missing_at_source/${reference}`]);
    // Found again: the same row, seen twice.
    expect((await reconcile()).open).toEqual([`ledger/missing_at_source/${reference}`]);
    expect((await eventsOf(reference)).row.seen).toBe(2);

    await env.database.db.transaction(async (tx) => {
      await tx.delete(ledgerEntries).where(eq(ledgerEntries.reference, 'by-hand'));
      await tx
        .update(wallets)
        .set({ available: sql`${wallets.available} - 500` })
        .where(eq(wallets.id, usdWallet()));
    });
    expect((await reconcile()).open).toEqual([]);
    expect(await eventsOf(reference)).toMatchObject({
      row: { state: 'resolved' },
      events: ['found by a run', 'resolved by a run'],
    });
  });

  it('reports a wallet whose balance is not the sum of its entries', async () => {
    await env.database.db
      .update(wallets)
      .set({ available: sql`${wallets.available} + 1` })
      .where(eq(wallets.id, usdWallet()));
    const found = await reconcile();
    expect(found.open).toEqual([`ledger/amount/${usdWallet()}`]);
    expect(found.rows[0]!.message).toMatch(/ledger entries sum to/);
    await env.database.db
      .update(wallets)
      .set({ available: sql`${wallets.available} - 1` })
      .where(eq(wallets.id, usdWallet()));
    expect((await reconcile()).open).toEqual([]);
  });

  it('reports the reserve a terminated payout left held, and ops accept it with a reason', async () => {
    const created = await merchant.post(
      '/api/v1/test/payout',
      payoutRequest(usdWallet(), { card_number: '4000000000003220', webhook_url: receiver.url }),
    );
    const id = created.json().data.transaction_id as string;
    await until('the reserve', async () =>
      (await env.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.reference, id))).some(
        (e) => e.step === 'reserve',
      ),
    );
    await env.client.workflow.getHandle(id).terminate('operator mistake');
    // Temporal lists a closed workflow a moment after it closed (a scheduled run's lag covers that).
    await until('Temporal to list the terminated workflow', async () => {
      for await (const _ of env.client.workflow.list({
        query: `WorkflowId = '${id}' AND ExecutionStatus = 'Terminated'`,
      }))
        return true;
      return false;
    });
    const found = await reconcile();
    expect(found.open).toEqual([`ledger/status/${id}`]);
    expect(found.rows[0]!.message).toMatch(
      /ended TERMINATED, but the transaction is still PENDING, its reserve of \d+ held/,
    );

    const refused = await runCliIn(env, 'recon', 'accept', String(found.rows[0]!.id));
    expect(refused).toMatchObject({ code: 1, stderr: 'error: Accepting a break needs a --reason.\n' });
    const accepted = await runCliIn(
      env,
      'recon',
      'accept',
      String(found.rows[0]!.id),
      '--reason',
      'released by hand in ticket 42',
      '--actor',
      'alice',
      '--json',
    );
    expect(accepted.stderr).toBe('');
    expect(JSON.parse(accepted.stdout)).toMatchObject({
      state: 'accepted',
      reason: 'released by hand in ticket 42',
    });
    // Accepted stays accepted: later runs find it and leave it.
    expect((await reconcile()).open).toEqual([]);
    expect(await eventsOf(id)).toMatchObject({
      row: { state: 'accepted', seen: 2 },
      events: ['found by a run', 'accepted by alice'],
    });
  });

  it("reports a projection edited to SUCCESS against its workflow and the acquirer's books, until it is put back", async () => {
    const id = await card({ card_number: '4000000000000002' });
    await env.database.db.update(transactions).set({ status: 'SUCCESS' }).where(eq(transactions.id, id));
    const found = await reconcile();
    // The status its workflow ended on, and what a SUCCESS would have: the acquirer's approval and the
    // SUCCESS event, neither of which exists.
    expect(found.open).toEqual([
      `ledger/missing_event/${id}`,
      `ledger/status/${id}`,
      `sandbox/missing_at_source/${id}`,
    ]);
    const statusBreak = found.rows.find((b) => b.kind === 'status')!;
    expect(statusBreak.message).toBe(`Transaction ${id} shows SUCCESS, but its workflow ended FAILED.`);
    const acked = await runCliIn(env, 'recon', 'ack', String(statusBreak.id), '--actor', 'bob');
    expect(acked.code).toBe(0);

    await env.database.db.update(transactions).set({ status: 'FAILED' }).where(eq(transactions.id, id));
    expect((await reconcile()).open).toEqual([]);
    const status = await env.database.db
      .select()
      .from(reconciliationBreakEvents)
      .where(eq(reconciliationBreakEvents.breakId, statusBreak.id))
      .orderBy(asc(reconciliationBreakEvents.id));
    expect(status.map((e) => `${e.action} by ${e.actor.startsWith('recon:') ? 'a run' : e.actor}`)).toEqual([
      'found by a run',
      'acknowledged by bob',
      'resolved by a run',
    ]);
  });

  it("reports an acquirer's charge carrying our key for no transaction we know", async () => {
    await env.database.db.insert(sandboxOperations).values({
      idempotencyKey: 'PAnobody0000:authorize:ter_gone',
      transactionId: 'PAnobody0000',
      connector: 'sandbox-acquirer',
      operation: 'authorization',
      state: 'approved',
      reference: 'sbx_ghost',
      amountMinor: 1200n,
      currency: 'USD',
    });
    const found = await reconcile();
    expect(found.open).toEqual(['sandbox/missing_in_ledger/PAnobody0000:authorize:ter_gone']);
    expect(found.rows[0]!.message).toMatch(/carries our key, but no transaction PAnobody0000 exists/);
    await env.database.db
      .delete(sandboxOperations)
      .where(eq(sandboxOperations.transactionId, 'PAnobody0000'));
    expect((await reconcile()).open).toEqual([]);
  });

  it('reports a refund the acquirer has no record of, and an amount that differs from its books', async () => {
    const refunded = await card();
    await merchant.postPlain('/api/v1/test/refund?Skip-Encryption=true', {
      transaction_id: refunded,
      reason: 'x',
    });
    await until(
      'the refund',
      async () =>
        (await env.database.db.select().from(transactions).where(eq(transactions.id, refunded)))[0]!.refunded,
    );
    const refundRecord = (
      await env.database.db
        .select()
        .from(sandboxOperations)
        .where(eq(sandboxOperations.idempotencyKey, `${refunded}:refund`))
    )[0]!;
    await env.database.db
      .delete(sandboxOperations)
      .where(eq(sandboxOperations.idempotencyKey, refundRecord.idempotencyKey));
    const charged = await card();
    const [authorization] = await env.database.db
      .select()
      .from(sandboxOperations)
      .where(
        and(eq(sandboxOperations.transactionId, charged), eq(sandboxOperations.operation, 'authorization')),
      );
    await env.database.db
      .update(sandboxOperations)
      .set({ amountMinor: 999n })
      .where(eq(sandboxOperations.idempotencyKey, authorization!.idempotencyKey));

    const found = await reconcile();
    expect(found.open).toEqual([
      `sandbox/amount/${authorization!.idempotencyKey}`,
      `sandbox/missing_at_source/${refunded}:refund`,
    ]);
    expect(found.rows.find((b) => b.kind === 'amount')).toMatchObject({ expected: '1050', observed: '999' });
    // A run over a window that holds neither payment checks each break again through what it names, and
    // leaves it open while its cause is there.
    expect((await reconcile({ since: new Date().toISOString() })).open).toEqual(found.open);

    await env.database.db.insert(sandboxOperations).values(refundRecord);
    await env.database.db
      .update(sandboxOperations)
      .set({ amountMinor: 1050n })
      .where(eq(sandboxOperations.idempotencyKey, authorization!.idempotencyKey));
    expect((await reconcile()).open).toEqual([]);
  });

  it("reports an acquirer's record in another currency, and a second approved authorization of one payment", async () => {
    const authorizationOf = async (id: string) =>
      (
        await env.database.db
          .select()
          .from(sandboxOperations)
          .where(
            and(eq(sandboxOperations.transactionId, id), eq(sandboxOperations.operation, 'authorization')),
          )
      )[0]!;
    const inEuros = await authorizationOf(await card());
    await env.database.db
      .update(sandboxOperations)
      .set({ currency: 'EUR' })
      .where(eq(sandboxOperations.idempotencyKey, inEuros.idempotencyKey));
    const twice = await card();
    const first = await authorizationOf(twice);
    const again = {
      ...first,
      idempotencyKey: `${first.idempotencyKey}:again`,
      reference: `${first.reference}-2`,
    };
    await env.database.db.insert(sandboxOperations).values(again);

    const found = await reconcile();
    expect(found.open).toEqual(
      [`sandbox/currency/${inEuros.idempotencyKey}`, `sandbox/duplicate/${twice}`].sort(),
    );
    expect(found.rows.find((b) => b.kind === 'currency')).toMatchObject({ expected: 'USD', observed: 'EUR' });

    await env.database.db
      .update(sandboxOperations)
      .set({ currency: 'USD' })
      .where(eq(sandboxOperations.idempotencyKey, inEuros.idempotencyKey));
    await env.database.db
      .delete(sandboxOperations)
      .where(eq(sandboxOperations.idempotencyKey, again.idempotencyKey));
    expect((await reconcile()).open).toEqual([]);
  });

  it("reports a second run's credit in a wallet that is not the transaction's, and a missing webhook event", async () => {
    const id = await card();
    const eur = merchant.credentials.wallets.find(
      (w) => w.mode === 'test' && w.currency === 'EUR',
    )!.wallet_id;
    await env.database.db.transaction(async (tx) => {
      await tx.insert(ledgerEntries).values({ walletId: eur, reference: id, step: 'credit', amount: 1050n });
      await tx
        .update(wallets)
        .set({ available: sql`${wallets.available} + 1050` })
        .where(eq(wallets.id, eur));
    });
    await until(
      'the webhook event',
      async () =>
        (await env.database.db.select().from(webhookEvents).where(eq(webhookEvents.transactionId, id)))
          .length > 0,
    );
    const [event] = await env.database.db
      .select()
      .from(webhookEvents)
      .where(eq(webhookEvents.transactionId, id));
    await env.database.db
      .update(webhookEvents)
      .set({ eventKey: 'moved-away' })
      .where(eq(webhookEvents.id, event!.id));

    const found = await reconcile();
    expect(found.open).toEqual([`ledger/duplicate/${eur}:${id}:credit`, `ledger/missing_event/${id}`]);
    expect(found.rows[0]!.message).toMatch(/not its wallet: a second run's step\?/);
  });

  it("checks a paid payin's credit against the fiat value of its counted deposits", async () => {
    const { db } = env.database;
    // 100 USDT on TRON for 100.00 USD (test/helpers/fixtures.ts), paid as `deposits` say, credited `credit`.
    const payin = async (paymentStatus: string, deposits: string[], credit?: bigint) => {
      const input = await insertPayinTransaction(db, merchant.credentials);
      const { transactionId, walletId } = input;
      await db
        .update(transactions)
        .set({
          status: 'SUCCESS',
          // As the API records it: the leg reads the locked rate there.
          workflowInput: { ...input },
          details: sql`${transactions.details} || ${JSON.stringify({ crypto_payment_status: paymentStatus })}::jsonb`,
        })
        .where(eq(transactions.id, transactionId));
      for (const [i, amount] of deposits.entries())
        await db
          .insert(cryptoDeposits)
          .values({ transactionId, txHash: `${transactionId}-${i}`, amount, countedInPayment: true });
      if (credit) await creditWallet(db, walletId, transactionId, credit);
      return transactionId;
    };
    const paidInFull = await payin('FULLPAID', ['60', '40'], 10_000n);
    // One base unit of USDT is worth less than a cent: nothing to credit, and no entry of zero.
    const dust = await payin('UNDERPAID', ['0.000001']);
    const overCredited = await payin('UNDERPAID', ['50'], 10_000n);
    const neverCredited = await payin('FULLPAID', ['100']);
    const ids = [paidInFull, dust, overCredited, neverCredited];

    const findings = await ledgerLeg(db).check({
      from: new Date(0),
      to: new Date(Date.now() + 60_000),
      transactionIds: ids,
      references: [],
    });
    expect(
      findings
        .filter((f) => ids.includes(f.transactionId ?? ''))
        .map((f) => `${f.kind} ${f.transactionId} expected ${f.expected}`)
        .sort(),
    ).toEqual(
      [`amount ${overCredited} expected 5000`, `missing_in_ledger ${neverCredited} expected credit`].sort(),
    );
  });

  it('reports a payment waiting past its deadline as stale', async () => {
    const waiting = await card({ card_number: '4111111111111111' });
    // A cut-off two hours ahead: the 3-D Secure payment has waited past the card deadline by then.
    const later = new Date(Date.now() + 2 * 60 * 60_000).toISOString();
    const found = await reconcile({ until: later });
    expect(found.open).toContain(`ledger/stale_pending/${waiting}`);
  });

  it('lists, shows and counts breaks for ops', async () => {
    const list = await runCliIn(env, 'recon', 'list');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/missing_event/);
    const [first] = (await reconcile()).rows;
    const show = await runCliIn(env, 'recon', 'show', String(first!.id), '--json');
    expect(JSON.parse(show.stdout)).toMatchObject({ id: first!.id, events: [{ action: 'found' }] });
    expect((await runCliIn(env, 'recon', 'show', '999999')).stderr).toBe('error: No break 999999.\n');
    expect((await runCliIn(env, 'recon', 'list', '--kind', 'nonsense')).stderr).toMatch(
      /^error: --kind must be one of/,
    );
    // A source nobody reads ends the run at once with the reason, rather than retrying it.
    const unknown = await runCliIn(env, 'recon', 'run', '--source', 'nowhere');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /no reconciliation source nowhere: the sources are ledger, sandbox, stripe, chain/,
    );
    const future = await runCliIn(env, 'recon', 'run', '--until', '2999-01-01T00:00:00Z');
    expect(future.stderr).toBe('error: --until must not be in the future, got "2999-01-01T00:00:00Z"\n');
    // The metric counts what is open now, by kind and age.
    const registry = new Registry();
    registerOpenBreaks(registry, env.database.db);
    const open = (await reconcile()).rows.filter((b) => b.kind === 'missing_event').length;
    expect(open).toBeGreaterThan(0);
    expect(await registry.metrics()).toContain(
      `payments_reconciliation_open_breaks{kind="missing_event",age="under_1h"} ${open}`,
    );
    const runs = await runCliIn(env, 'recon', 'runs');
    expect(runs.stdout).toMatch(/reconciliation-run-.* finished/);
  });
});
