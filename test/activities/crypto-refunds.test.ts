/**
 * The crypto activities against a test database, without Temporal: when a counted deposit may still go
 * back to its sender once its transaction's row is final.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { ApplicationFailure } from '@temporalio/common';
import { cryptoActivities } from '../../activities/crypto';
import { sandboxChain } from '../../activities/connectors/sandbox-chain';
import { cryptoDeposits, transactions } from '../../src/db/schema/index';
import { createMerchant, type MerchantCredentials } from '../../src/merchants/accounts';
import { failureTypes } from '../../src/contracts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';
import { databaseForFile } from '../helpers/env';
import { insertRampTransaction } from '../helpers/fixtures';
import { activityEnvironment } from '../helpers/mock-activity';

const db = databaseForFile(2);
let merchant: MerchantCredentials;

beforeAll(async () => {
  merchant = await createMerchant(db().db, randomBytes(32).toString('hex'), {
    name: 'Refunds',
    wallets: [{ currency: 'USD', amount: 0n }],
    terminals: SANDBOX_TERMINALS,
  });
});

/** The activity as a run of `runId` runs it. */
const asRun = (transactionId: string, runId: string) =>
  activityEnvironment({ workflowExecution: { workflowId: transactionId, runId } });

/** An off-ramp whose deposit was counted, then made FAILED by the run `wroteFinal`. */
async function failedWithACountedDeposit(wroteFinal: string) {
  const { transactionId } = await insertRampTransaction(db().db, merchant, 'OFFRAMP');
  const activities = cryptoActivities(db().db, sandboxChain());
  const deposit = { transactionId, txHash: `0x${randomBytes(32).toString('hex')}`, amount: '40' };
  await activityEnvironment().run(activities.recordDeposit, { ...deposit, sender: 'TSender' });
  await db()
    .db.update(transactions)
    .set({ status: 'FAILED', message: 'Stopped by ops.', statusRunId: wroteFinal })
    .where(eq(transactions.id, transactionId));
  const refund = {
    ...deposit,
    sender: 'TSender',
    network: 'TRON',
    currency: 'USDT',
    reason: 'Stopped by ops.',
    countedInPayment: true,
    refundAmount: '40',
    whole: true,
  };
  return { activities, refund, transactionId };
}

describe('refunding a counted deposit once the transaction is final', () => {
  it('goes ahead when the run refunding it wrote the final status (a retried workflow task decides again)', async () => {
    const { activities, refund, transactionId } = await failedWithACountedDeposit('run-a');
    const hash = await asRun(transactionId, 'run-a').run(activities.refundDeposit, refund);
    const [row] = await db()
      .db.select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, transactionId));
    expect(row).toMatchObject({ disposition: 'refunded', refundTxHash: hash, countedInPayment: true });
  });

  it('is refused, with the final state, for a run other than the one that wrote it (a Reset)', async () => {
    const { activities, refund, transactionId } = await failedWithACountedDeposit('run-a');
    const failure = await asRun(transactionId, 'run-b')
      .run(activities.refundDeposit, refund)
      .then(
        () => undefined,
        (error: ApplicationFailure) => error,
      );
    expect(failure?.type).toBe(failureTypes.alreadyFinal);
    expect(failure?.details?.[0]).toEqual({ status: 'FAILED', message: 'Stopped by ops.' });
    const [row] = await db()
      .db.select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, transactionId));
    expect(row).toMatchObject({ disposition: 'counted', refundTxHash: null });
  });
});
