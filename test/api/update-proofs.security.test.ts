import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asc, eq, sql } from 'drizzle-orm';
import {
  Client,
  WorkflowFailedError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
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
import { withoutCard } from '../helpers/hosted-pages';
import { startWebhookReceiver } from '../helpers/webhook-receiver';
import { NotProcessedError } from '../../activities/connectors/errors';
import type { PayoutProcessor } from '../../activities/connectors/types';
import {
  cryptoDeposits,
  ledgerEntries,
  opsActions,
  transactions,
  wallets,
  webhookEvents,
} from '../../src/db/schema/index';
import { dataConverter, payloadCodec } from '../../src/temporal/client';
import {
  INTERNAL_UPDATES,
  NOT_AN_OPS_ACTION,
  NOT_THE_SERVICE_RUN,
  depositUpdate,
  failureTypes,
  workflowIds,
} from '../../src/contracts';
import { updateKeyOf, updateProver } from '../../src/ciphers/update-proof';
import { sendAftercare } from '../../src/transactions/aftercare';
import { recordAftercareTicket } from '../../src/transactions/runs';
import { eventually } from '../helpers/eventually';

/**
 * What someone with the Temporal UI can do: send any update a workflow defines, by name, with data of
 * their own and without the service's proof. Every internal update is refused and moves nothing; the ops
 * updates are taken and audited with the UI as their actor. The list of updates comes from each
 * workflow's own metadata (what the UI's dialog offers), so an update added later is covered too.
 */
let env: TestEnv;
let merchant: MerchantClient;
let ui: Client;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

/** The payout processor refuses every send (nothing processed): a payout waits in a backoff. */
const refusing: PayoutProcessor = {
  send: async () => {
    throw new NotProcessedError('processor unavailable (503)');
  },
  confirm: async () => {
    throw new NotProcessedError('processor unavailable (503)');
  },
  lookup: async () => ({ outcome: 'not_found' }),
};

beforeAll(async () => {
  env = await startTestEnv(
    // Live merchant URLs need not resolve here: the address guard is not the subject.
    { WEBHOOK_RETRY_SCHEDULE_SECONDS: '600', FIRST_ANSWER_TIMEOUT_MS: '1500', ALLOW_PRIVATE_URLS: 'true' },
    { payoutConnectors: { 'sandbox-payouts': refusing } },
  );
  merchant = merchantClient(env.app, await env.createMerchant());
  receiver = await startWebhookReceiver();
  receiver.answerWith(503);
  // The Temporal UI: the same server and payload codec, none of the service's keys.
  ui = new Client({ connection: env.client.connection, dataConverter: dataConverter(env.config) });
});
afterAll(async () => {
  await receiver?.close();
  await env?.close();
});

const OPS_UPDATES = ['retryNow', 'forceFail', 'redeliverWebhooks'];
const READ_ONLY_UPDATES = ['firstAnswer'];

/** What a UI user might type into the update dialog for each internal update. */
const FORGED: Record<(typeof INTERNAL_UPDATES)[number], unknown> = {
  hostedDecision: 'approve',
  cardEntered: { card: { bin: '411111', last4: '1111', fingerprint: 'forged' } },
  apmMethod: { method: 'bank_redirect' },
  deposit: { txHash: 'forged', units: '10000000', sender: 'attacker' },
  linkUsed: { transactionId: 'PAforgedforgedforgedforged' },
  refund: { reason: 'forged refund', actor: 'merchant:forged' },
  chargeback: { reason: '' },
  closeWindow: {},
  expireWait: {},
  expireLink: {},
};

async function sendAsUi(workflowId: string, update: string, arg?: unknown) {
  try {
    const handle = ui.workflow.getHandle(workflowId);
    const result =
      arg === undefined
        ? await handle.executeUpdate(update)
        : await handle.executeUpdate(update, { args: [arg] });
    return { taken: result };
  } catch (error) {
    if (!(error instanceof WorkflowUpdateFailedError)) throw error;
    return { refused: error.cause?.message ?? error.message };
  }
}

async function updatesOf(workflowId: string): Promise<{ updates: string[]; signals: string[] }> {
  const metadata = (await ui.workflow.getHandle(workflowId).query('__temporal_workflow_metadata')) as {
    definition: { updateDefinitions?: { name: string }[]; signalDefinitions?: { name: string }[] };
  };
  return {
    updates: (metadata.definition.updateDefinitions ?? []).map((u) => u.name).sort(),
    signals: (metadata.definition.signalDefinitions ?? []).map((s) => s.name),
  };
}

/** Everything money or status is made of, to compare before and after. */
async function books() {
  const db = env.database.db;
  return {
    transactions: await db
      .select({ id: transactions.id, status: transactions.status, version: transactions.version })
      .from(transactions)
      .orderBy(asc(transactions.id)),
    ledger: (await db.select({ n: sql<number>`count(*)::int` }).from(ledgerEntries))[0]!.n,
    deposits: (await db.select({ n: sql<number>`count(*)::int` }).from(cryptoDeposits))[0]!.n,
    wallets: await db
      .select({ id: wallets.id, available: wallets.available })
      .from(wallets)
      .orderBy(asc(wallets.id)),
    audit: (await db.select({ n: sql<number>`count(*)::int` }).from(opsActions))[0]!.n,
  };
}

const created = async (path: string, fields: Record<string, unknown>) => {
  const response = await merchant.post(path, fields);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as { status: string; data: { transaction_id: string } };
};

/** The decoded input a workflow was started with. */
async function inputOf(workflowId: string): Promise<Record<string, unknown>> {
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const [payload] = await payloadCodec(env.config).decode(started?.input?.payloads ?? []);
  return JSON.parse(Buffer.from(payload!.data!).toString('utf8')) as Record<string, unknown>;
}

describe('updates sent by name from the Temporal UI, without the service proof', () => {
  it(
    'refuses every internal update of every workflow, moves nothing, and takes only the ops ones',
    { timeout: 180_000 },
    async () => {
      const walletId = merchant.credentials.wallets.find(
        (w) => w.mode === 'test' && w.currency === 'USD',
      )!.wallet_id;
      const card = await created('/api/v1/test/card', cardRequest({ card_number: '4111111111111111' }));
      const hosted = await created('/api/v1/test/hosted/card', withoutCard(cardRequest()));
      const apm = await created('/api/v1/test/apm', withoutCard(cardRequest()));
      const payin = await created('/api/v1/test/crypto/payin', payinRequest());
      const onramp = await created('/api/v1/test/crypto', rampRequest());
      const payout = await created('/api/v1/test/payout', payoutRequest(walletId, { amount: 700 }));
      const settled = await created(
        '/api/v1/test/card',
        cardRequest({ card_number: '4242424242424242', webhook_url: receiver.url }),
      );
      expect(settled.status).toBe('SUCCESS');
      const template = await runCliIn(
        env,
        ...['templates', 'add', '--merchant', merchant.credentials.merchant_id, '--mode', 'test'],
        ...['--name', 'Proofs', '--redirect-url', 'https://merchant.example/thanks', '--json'],
      );
      expect(template.code, template.stderr).toBe(0);
      const link = await merchant.postPlain('/api/v1/payment-link', {
        payment_template_id: JSON.parse(template.stdout).payment_template_id,
        amount: 1000,
        currency: 'USD',
      });
      expect(link.statusCode, link.body).toBe(200);
      const linkId = new URL(link.json().data as string).pathname.split('/').pop()!;
      // An aftercare run open for requests, as a refund through the API opens one (its ticket first).
      const ticket = 'ticket-of-an-open-aftercare-run';
      await recordAftercareTicket(env.database.db, settled.data.transaction_id, ticket);
      await env.client.workflow.start('aftercare', {
        workflowId: workflowIds.aftercare(settled.data.transaction_id),
        taskQueue: env.config.TEMPORAL_TASK_QUEUE,
        args: [{ transactionId: settled.data.transaction_id, ticket }],
      });
      const [event] = await eventually('the webhook event', async () => {
        const rows = await env.database.db
          .select()
          .from(webhookEvents)
          .where(eq(webhookEvents.transactionId, settled.data.transaction_id));
        return rows.length > 0 ? rows : undefined;
      });
      const delivery = workflowIds.webhook(event!.id, 0);
      await eventually('the first failed attempt', async () =>
        receiver.received.length > 0 ? true : undefined,
      );
      // The transaction's workflow made that attempt; its retries go on in a delivery workflow it starts.
      await eventually('the delivery workflow', () =>
        env.client.workflow
          .getHandle(delivery)
          .describe()
          .then(
            () => true,
            () => undefined,
          ),
      );

      const workflows = [
        card.data.transaction_id,
        hosted.data.transaction_id,
        apm.data.transaction_id,
        payin.data.transaction_id,
        onramp.data.transaction_id,
        payout.data.transaction_id,
        workflowIds.aftercare(settled.data.transaction_id),
        workflowIds.paymentLink(linkId),
        delivery,
      ];
      // The service starts every one that takes internal updates with its update key.
      for (const id of workflows.filter((w) => w !== delivery))
        expect((await inputOf(id)).updateKey, id).toBe(updateKeyOf(env.config.MASTER_KEY));

      const before = await books();
      const seen = new Set<string>();
      for (const id of workflows) {
        const { updates, signals } = await updatesOf(id);
        expect(signals, `${id} defines no signal`).toEqual([]);
        for (const update of updates) {
          seen.add(update);
          if ((INTERNAL_UPDATES as readonly string[]).includes(update)) {
            const sent = await sendAsUi(id, update, FORGED[update as keyof typeof FORGED]);
            expect(sent, `${update} on ${id}`).toEqual({ refused: NOT_AN_OPS_ACTION });
          } else if (READ_ONLY_UPDATES.includes(update)) {
            // Taken (it waits for the first answer, which a payout held in a backoff has not given yet).
            await ui.workflow
              .getHandle(id)
              .startUpdate(update, { waitForStage: WorkflowUpdateStage.ACCEPTED });
          } else {
            expect(OPS_UPDATES, `${update} on ${id} is an ops action`).toContain(update);
          }
        }
      }
      // Every internal update was offered by some workflow, and tried.
      for (const update of INTERNAL_UPDATES) expect(seen, update).toContain(update);
      expect(await books(), 'nothing moved').toEqual(before);
      expect(await env.database.db.select().from(cryptoDeposits)).toEqual([]);

      // The ops updates, sent by name with no actor, are taken and audited as the UI's.
      expect(await sendAsUi(payout.data.transaction_id, 'retryNow', {})).toHaveProperty('taken');
      expect(await sendAsUi(card.data.transaction_id, 'redeliverWebhooks', {})).toHaveProperty('taken');
      expect(await sendAsUi(apm.data.transaction_id, 'forceFail', { reason: 'Stopped from the UI' })).toEqual(
        {
          taken: { status: 'FAILED', message: 'Stopped from the UI' },
        },
      );
      expect(await sendAsUi(delivery, 'retryNow', {})).toHaveProperty('taken');
      await ui.workflow.getHandle(onramp.data.transaction_id).cancel();
      expect(await ui.workflow.getHandle(onramp.data.transaction_id).result()).toEqual({
        status: 'FAILED',
        message: 'Cancelled by ops.',
      });
      const audit = await eventually('the audit rows', async () => {
        const rows = await env.database.db.select().from(opsActions);
        return rows.length >= 5 ? rows : undefined;
      });
      const actions = (id: string) =>
        audit.filter((row) => row.transactionId === id).map((row) => [row.action, row.actor]);
      expect(actions(payout.data.transaction_id)).toEqual([['retryNow', 'temporal-ui']]);
      expect(actions(card.data.transaction_id)).toEqual([['redeliverWebhooks', 'temporal-ui']]);
      expect(actions(apm.data.transaction_id)).toEqual([['forceFail', 'temporal-ui']]);
      expect(actions(onramp.data.transaction_id)).toEqual([['cancel', 'temporal-ui']]);
      expect(actions(settled.data.transaction_id)).toEqual([['retryWebhook', 'temporal-ui']]);
    },
  );

  it("counts the service's own deposits, and refuses a proof used before or meant for another", async () => {
    const payin = await created('/api/v1/test/crypto/payin', payinRequest({ amount: 100 }));
    const other = await created('/api/v1/test/crypto/payin', payinRequest({ amount: 100 }));
    const id = payin.data.transaction_id;
    const deposit = await merchant.postPlain(`/api/v1/test/crypto/${id}/deposit`, { amount: '10' });
    expect(deposit.json().deposit).toMatchObject({ disposition: 'counted' });

    // A proof as the service makes one, used once by the service, then seen again (copied from the
    // workflow's history, say): refused the second time, and on any other workflow.
    const arg = { txHash: 'deposit-two', units: '20000000', sender: 'customer', source: 'sandbox' as const };
    const runId = (await env.client.workflow.getHandle(id).describe()).runId;
    const proof = updateProver(env.config.MASTER_KEY).prove({ workflowId: id, runId }, 'deposit', arg);
    expect(
      await ui.workflow.getHandle(id, runId).executeUpdate(depositUpdate, { args: [arg, proof] }),
    ).toMatchObject({ disposition: 'counted' });
    const replay = (workflowId: string, data: unknown) =>
      ui.workflow
        .getHandle(workflowId)
        .executeUpdate(depositUpdate, { args: [data as never, proof] })
        .then(
          () => 'taken',
          (error: unknown) => (error as WorkflowUpdateFailedError).cause?.message,
        );
    const before = await books();
    expect(await replay(id, arg)).toBe(NOT_AN_OPS_ACTION);
    expect(await replay(id, { ...arg, txHash: 'another', units: '90000000' })).toBe(NOT_AN_OPS_ACTION);
    expect(await replay(id, { ...arg, txHash: 'deposit-three' })).toBe(NOT_AN_OPS_ACTION);
    expect(await replay(other.data.transaction_id, arg)).toBe(NOT_AN_OPS_ACTION);
    expect(await books()).toEqual(before);
  });

  it('refuses a chargeback of a live payment in the workflow, whoever sends it', async () => {
    const live = await merchant.post('/api/v1/live/card', cardRequest({ card_number: '4242424242424242' }));
    expect(live.json().status).toBe('SUCCESS');
    const id = live.json().data.transaction_id as string;
    const viaCli = await runCliIn(env, 'ops', 'chargeback', id, '--json');
    expect(viaCli.code).not.toBe(0);
    expect(viaCli.stderr).toContain('Chargebacks can only be simulated in test mode.');
    // The service's own client, past every route: the workflow itself says no.
    expect(
      await sendAftercare(
        { db: env.database.db, temporal: env.client, config: env.config },
        id,
        'chargeback',
        { reason: '', actor: 'test' },
      ),
    ).toEqual({ refused: 'Chargebacks can only be simulated in test mode.' });
    const [row] = await env.database.db.select().from(transactions).where(eq(transactions.id, id));
    expect(row).toMatchObject({ status: 'SUCCESS', chargeback: false });
    expect(
      (
        await merchant.postPlain(
          '/api/v1/live/refund',
          { transaction_id: id, reason: 'ok' },
          {
            key: merchant.key('live'),
          },
        )
      ).statusCode,
    ).toBe(200);
  });

  it('fails a workflow started from the UI at its first step, with a key of its starter or none', async () => {
    // "Start Workflow" in the UI: an on-ramp paying the starter's wallet, and a payin crediting a
    // merchant's wallet, each with a key the starter holds and signs with.
    const attacker = updateProver('cd'.repeat(32));
    const walletId = merchant.credentials.wallets.find(
      (w) => w.mode === 'test' && w.currency === 'USD',
    )!.wallet_id;
    const crypto = {
      cryptoCurrency: 'USDT',
      cryptoNetwork: 'TRON',
      decimals: 6,
      expectedUnits: '100000000',
      fiatMinor: '10000',
      fiatDecimals: 2,
      depositWindowSeconds: 3600,
    };
    const base = {
      merchantId: merchant.credentials.merchant_id,
      mode: 'test' as const,
      updateKey: attacker.publicKey,
      crypto,
      hostedPageUrl: 'http://attacker.example',
    };
    const before = await books();
    const onramp = await ui.workflow.start('cryptoRamp', {
      workflowId: 'PAforgedOnrampForgedOnramp01',
      taskQueue: env.config.TEMPORAL_TASK_QUEUE,
      args: [
        {
          ...base,
          transactionId: 'PAforgedOnrampForgedOnramp01',
          transactionType: 'ONRAMP',
          walletAddress: 'TAttackerWalletAttackerWallet',
          fiatCurrency: 'USD',
          fiatAmount: '100.00',
          paymentWindowSeconds: 600,
        },
      ],
    });
    const payin = await ui.workflow.start('cryptoPayin', {
      workflowId: 'PAforgedPayinForgedPayin0001',
      taskQueue: env.config.TEMPORAL_TASK_QUEUE,
      args: [{ ...base, transactionId: 'PAforgedPayinForgedPayin0001', walletId }],
    });
    // Started with no key at all: an aftercare run of a live payment, to refund it by name.
    const live = await merchant.post('/api/v1/live/card', cardRequest({ card_number: '4242424242424242' }));
    const liveId = live.json().data.transaction_id as string;
    const aftercare = await ui.workflow.start('aftercare', {
      workflowId: workflowIds.aftercare(liveId),
      taskQueue: env.config.TEMPORAL_TASK_QUEUE,
      args: [{ transactionId: liveId }],
    });
    for (const handle of [onramp, payin, aftercare]) {
      const failure = await handle.result().then(
        () => undefined,
        (error: WorkflowFailedError) => error.cause,
      );
      expect(failure, handle.workflowId).toBeInstanceOf(ApplicationFailure);
      expect((failure as ApplicationFailure).type).toBe(failureTypes.notTheServiceRun);
      expect(failure?.message).toContain(NOT_THE_SERVICE_RUN);
      // Nothing but the check ran: no activity, no timer, no projection.
      const history = await handle.fetchHistory();
      const scheduled = history.events!.flatMap(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
      );
      expect(scheduled, handle.workflowId).toEqual([]);
    }
    const refused = await env.database.db
      .select()
      .from(opsActions)
      .where(eq(opsActions.action, 'refusedRun'));
    expect(refused.map((row) => row.transactionId).sort()).toEqual(
      [liveId, 'PAforgedOnrampForgedOnramp01', 'PAforgedPayinForgedPayin0001'].sort(),
    );
    const [liveRow] = await env.database.db.select().from(transactions).where(eq(transactions.id, liveId));
    expect(liveRow).toMatchObject({ status: 'SUCCESS', refunded: false });
    const after = await books();
    expect({ ...after, audit: before.audit }).toEqual({ ...before, transactions: expect.any(Array) });
  });
});
