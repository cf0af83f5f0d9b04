import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asc, eq } from 'drizzle-orm';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, payoutRequest, type MerchantClient } from '../helpers/merchant-client';
import { sandboxPayouts } from '../../activities/connectors/sandbox-payouts';
import { sandboxAcquirer } from '../../activities/connectors/sandbox-acquirer';
import type { CardAcquirer, PayoutProcessor } from '../../activities/connectors/types';
import { ledgerEntries, opsActions, transactions } from '../../src/db/schema/index';
import { forceFailUpdate, retryNowUpdate } from '../../src/contracts';
import { eventually } from '../helpers/eventually';

/**
 * A stop (the UI's Request Cancellation, or forceFail) that arrives while the workflow asks a connector
 * about a call whose answer was lost: the questions keep their backoff, the money stays where the
 * connector put it until it answers, and the stop is honoured then.
 */
let env: TestEnv;
let merchant: MerchantClient;

/** While set, the processor and the acquirer answer every lookup "still in progress". */
let busy = true;
let payoutLookups = 0;
let cardLookups = 0;

beforeAll(async () => {
  env = await startTestEnv(
    { FIRST_ANSWER_TIMEOUT_MS: '1000' },
    (() => {
      const lazy = {
        payouts: undefined as PayoutProcessor | undefined,
        acquirer: undefined as CardAcquirer | undefined,
      };
      const payouts = () => (lazy.payouts ??= sandboxPayouts(env.database.db));
      const acquirer = () => (lazy.acquirer ??= sandboxAcquirer(env.database.db));
      const slowPayouts: PayoutProcessor = {
        send: (request) => payouts().send(request),
        confirm: (request) => payouts().confirm(request),
        async lookup(request) {
          payoutLookups += 1;
          return busy ? { outcome: 'pending' } : payouts().lookup(request);
        },
      };
      const slowAcquirer: CardAcquirer = {
        authorize: (request) => acquirer().authorize(request),
        completeChallenge: (request) => acquirer().completeChallenge(request),
        refund: (request) => acquirer().refund(request),
        cancel: (request) => acquirer().cancel(request),
        async lookup(request) {
          cardLookups += 1;
          return busy ? { outcome: 'pending' } : acquirer().lookup(request);
        },
      };
      return {
        payoutConnectors: { 'sandbox-payouts': slowPayouts },
        cardConnectors: { 'sandbox-acquirer': slowAcquirer },
      };
    })(),
  );
  merchant = merchantClient(env.app, await env.createMerchant());
});
afterAll(() => env?.close());

const rowOf = async (id: string) =>
  (await env.database.db.select().from(transactions).where(eq(transactions.id, id)))[0]!;

const beingConfirmed = (id: string) =>
  eventually('the outcome being asked for', async () =>
    (await rowOf(id)).message === 'The outcome is being confirmed with the processor.' ? true : undefined,
  );

describe('a stop while an unknown outcome is asked for', () => {
  it('keeps the backoff of a payout whose send answer was lost, then settles as the processor says', async () => {
    busy = true;
    const walletId = merchant.credentials.wallets.find(
      (w) => w.mode === 'test' && w.currency === 'USD',
    )!.wallet_id;
    const created = await merchant.post(
      '/api/v1/test/payout',
      payoutRequest(walletId, { card_number: '4000000000003261', amount: 300 }),
    );
    const id = created.json().data.transaction_id as string;
    await beingConfirmed(id);
    const handle = env.client.workflow.getHandle(id);

    // forceFail is refused while the answer is asked for; the UI's cancellation is taken, and waits.
    await expect(
      handle.executeUpdate(forceFailUpdate, { args: [{ reason: 'Give up', actor: 'ops' }] }),
    ).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    const asked = payoutLookups;
    await handle.cancel();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    // Its backoff is ten seconds and more: a stop that ended it would have asked hundreds of times by now.
    expect(payoutLookups - asked).toBeLessThanOrEqual(1);
    expect((await rowOf(id)).status).toBe('PENDING');
    const events = (await handle.fetchHistory()).events!.length;
    expect(events).toBeLessThan(60);

    // The processor knows now; ops need not wait for the backoff.
    busy = false;
    await handle.executeUpdate(retryNowUpdate, { args: [{ actor: 'ops' }] });
    expect(await handle.result()).toEqual({
      status: 'SUCCESS',
      message: 'Transaction processed successfully.',
    });
    const ledger = await env.database.db
      .select({ step: ledgerEntries.step, amount: ledgerEntries.amount })
      .from(ledgerEntries)
      .where(eq(ledgerEntries.reference, id))
      .orderBy(asc(ledgerEntries.id));
    // Paid by the processor: the reserve is settled, never released while the money was out.
    expect(ledger).toEqual([
      { step: 'reserve', amount: -300n },
      { step: 'settle', amount: 0n },
    ]);
    const trail = await env.database.db.select().from(opsActions).where(eq(opsActions.transactionId, id));
    expect(trail.map((row) => [row.action, row.actor, row.statusAfter]).sort()).toEqual([
      ['cancel', 'temporal-ui', 'SUCCESS'],
      ['retryNow', 'ops', 'SUCCESS'],
    ]);
  });

  it('keeps the backoff of a card payment whose authorization answer was lost', async () => {
    busy = true;
    const created = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ card_number: '4000000000000770' }),
    );
    const id = created.json().data.transaction_id as string;
    await beingConfirmed(id);
    const handle = env.client.workflow.getHandle(id);
    const asked = cardLookups;
    await handle.cancel();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(cardLookups - asked).toBeLessThanOrEqual(1);
    expect((await rowOf(id)).status).toBe('PENDING');

    busy = false;
    await handle.executeUpdate(retryNowUpdate, { args: [{ actor: 'ops' }] });
    // The acquirer approved it: the card was charged, so the payment settles; the stop came too late.
    expect((await handle.result()).status).toBe('SUCCESS');
  });
});
