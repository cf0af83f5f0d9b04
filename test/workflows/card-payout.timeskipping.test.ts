import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asc, eq } from 'drizzle-orm';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { insertPayoutTransaction } from '../helpers/fixtures';
import { ledgerEntries, transactions, wallets } from '../../src/db/schema/index';
import { cardPayout } from '../../workflows/card-payout';
import type { MerchantCredentials } from '../../src/merchants/accounts';

let ts: TimeSkippingEnv;
let merchant: MerchantCredentials;

beforeAll(async () => {
  ts = await startTimeSkipping();
  merchant = await ts.createMerchant();
});
afterAll(() => ts?.close());

describe('card payout workflow (time-skipping)', () => {
  it('fails a verification nobody answers within 24 hours and releases the reservation', async () => {
    const input = await insertPayoutTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
      pan: '4000000000003220',
    });
    const handle = await ts.env.client.workflow.start(cardPayout, {
      workflowId: input.transactionId,
      taskQueue: ts.taskQueue,
      args: [input],
    });
    const started = Date.now();
    const result = await handle.result();
    expect(result).toEqual({ status: 'FAILED', message: 'Payout verification expired.' });
    expect(Date.now() - started).toBeLessThan(60_000);

    const history = await handle.fetchHistory();
    const timer = history.events?.find((e) => e.timerStartedEventAttributes);
    expect(Number(timer?.timerStartedEventAttributes?.startToFireTimeout?.seconds)).toBe(24 * 60 * 60);

    const steps = await ts.database.db
      .select({ step: ledgerEntries.step, amount: ledgerEntries.amount })
      .from(ledgerEntries)
      .where(eq(ledgerEntries.reference, input.transactionId))
      .orderBy(asc(ledgerEntries.id));
    expect(steps).toEqual([
      { step: 'reserve', amount: -500n },
      { step: 'release', amount: 500n },
    ]);
    const [wallet] = await ts.database.db.select().from(wallets).where(eq(wallets.id, input.walletId));
    expect(wallet!.available).toBe(1_000_000n);
    const [row] = await ts.database.db
      .select()
      .from(transactions)
      .where(eq(transactions.id, input.transactionId));
    expect(row).toMatchObject({ status: 'FAILED', message: 'Payout verification expired.' });
  });
});
