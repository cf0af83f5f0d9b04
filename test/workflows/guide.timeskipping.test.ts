import { afterEach, beforeEach, expect, it } from 'vitest';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { insertCardTransaction } from '../helpers/fixtures';
import { cardPayment } from '../../workflows/card-payment';

let ts: TimeSkippingEnv;
beforeEach(async () => {
  ts = await startTimeSkipping();
});
afterEach(() => ts?.close());

it('fails a 3-D Secure challenge nobody answers once its window has passed', async () => {
  const merchant = await ts.createMerchant();
  // The transaction as the API records it: the workflow moves money only on that record.
  const input = await insertCardTransaction(ts.database.db, ts.config.MASTER_KEY, merchant, {
    pan: '4111111111111111', // asks for 3-D Secure (docs/sandbox.md)
  });
  // Awaiting the result lets the server skip the 15-minute window.
  const result = await ts.env.client.workflow.execute(cardPayment, {
    workflowId: input.transactionId,
    taskQueue: ts.taskQueue,
    args: [input],
  });
  expect(result).toEqual({ status: 'FAILED', message: 'Transaction abandoned.' });
});
