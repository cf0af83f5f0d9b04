import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { insertCardTransaction } from '../helpers/fixtures';
import { localActivitiesOf } from '../helpers/local-activities';
import { cardVault, transactions } from '../../src/db/schema/index';
import { cardPayment } from '../../workflows/card-payment';
import type { MerchantCredentials } from '../../src/merchants/accounts';

let ts: TimeSkippingEnv;
let merchant: MerchantCredentials;

beforeAll(async () => {
  ts = await startTimeSkipping();
  merchant = await ts.createMerchant();
});
afterAll(() => ts?.close());

/** Only a tombstone is left of the vaulted card: nothing of the card, and nothing can vault it again. */
async function expectOnlyTombstone(transactionId: string) {
  const vault = await ts.database.db
    .select()
    .from(cardVault)
    .where(eq(cardVault.transactionId, transactionId));
  expect(vault).toEqual([
    expect.objectContaining({ panEnc: null, expiryEnc: null, cvvEnc: null, purgedAt: expect.any(Date) }),
  ]);
}

describe('card payment workflow (time-skipping)', () => {
  it('fails a 3DS challenge nobody answers after 15 minutes with "Transaction abandoned."', async () => {
    const input = await insertCardTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
      pan: '4111111111111111',
    });
    const startedAt = Date.now();
    const result = await ts.env.client.workflow.execute(cardPayment, {
      workflowId: input.transactionId,
      taskQueue: ts.taskQueue,
      args: [input],
    });
    expect(result).toEqual({ status: 'FAILED', message: 'Transaction abandoned.' });
    expect(Date.now() - startedAt).toBeLessThan(60_000);

    const [row] = await ts.database.db
      .select()
      .from(transactions)
      .where(eq(transactions.id, input.transactionId));
    expect(row).toMatchObject({
      status: 'FAILED',
      message: 'Transaction abandoned.',
      descriptor: 'SANDBOX*PRIMARY',
    });
    await expectOnlyTombstone(input.transactionId);
  });

  it('abandons a hosted card payment whose card nobody types, after the challenge timeout', async () => {
    const input = await insertCardTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
      pan: '4242424242424242',
      hosted: true,
      challengeTimeoutSeconds: 600,
    });
    const handle = await ts.env.client.workflow.start(cardPayment, {
      workflowId: input.transactionId,
      taskQueue: ts.taskQueue,
      args: [input],
    });
    expect(await handle.result()).toEqual({ status: 'FAILED', message: 'Transaction abandoned.' });
    const history = await handle.fetchHistory();
    const timer = history.events?.find((e) => e.timerStartedEventAttributes);
    expect(Number(timer?.timerStartedEventAttributes?.startToFireTimeout?.seconds)).toBe(600);
    const [row] = await ts.database.db
      .select()
      .from(transactions)
      .where(eq(transactions.id, input.transactionId));
    // It waited on the payment page, then ended without a terminal, a card or a page to go to.
    expect(row).toMatchObject({ status: 'FAILED', redirectUrl: null, terminalId: null, cardBin: null });
  });

  it('honours a configured challenge timeout', async () => {
    const input = await insertCardTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
      pan: '5555555555554444',
      challengeTimeoutSeconds: 120,
    });
    const handle = await ts.env.client.workflow.start(cardPayment, {
      workflowId: input.transactionId,
      taskQueue: ts.taskQueue,
      args: [input],
    });
    const result = await handle.result();
    expect(result.status).toBe('FAILED');
    const history = await handle.fetchHistory();
    const timer = history.events?.find((e) => e.timerStartedEventAttributes);
    expect(Number(timer?.timerStartedEventAttributes?.startToFireTimeout?.seconds)).toBe(120);
  });

  it('lists its terminals as it binds its run, and purges the card with the move its routing leads to', async () => {
    const input = await insertCardTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
      pan: '4242424242424242',
    });
    const handle = await ts.env.client.workflow.start(cardPayment, {
      workflowId: input.transactionId,
      taskQueue: ts.taskQueue,
      args: [input],
    });
    expect(await handle.result()).toEqual({
      status: 'SUCCESS',
      message: 'Transaction processed successfully.',
    });
    await expectOnlyTombstone(input.transactionId);
    // The binding listed the terminals, the SUCCESS projection did the purge.
    const steps = await localActivitiesOf(handle);
    expect(steps).toEqual(['bindRun', 'authorizeCard', 'project']);
  });
});
