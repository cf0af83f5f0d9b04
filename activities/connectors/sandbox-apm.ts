import type { Db } from '../../src/db/client';
import { NotProcessedError } from './errors';
import { sandboxRecords, type SandboxRecord } from './sandbox-records';
import type { ApmProvider, ApmStatus } from './types';

/**
 * A sandbox provider of one alternative payment method (`sandbox-bank`: a bank redirect, `sandbox-wallet`:
 * a wallet). It has no page of its own: the customer approves or declines on our stand-in page
 * (docs/hosted.md). Its books are keyed by the payment's idempotency key, so a repeat answers the same.
 */
export function sandboxApm(db: Db, connector: 'sandbox-bank' | 'sandbox-wallet'): ApmProvider {
  const books = sandboxRecords(db, connector, 'authorization');
  const declined =
    connector === 'sandbox-bank' ? 'Payment declined by the bank.' : 'Payment declined in the wallet.';
  const statusOf = (record: SandboxRecord): ApmStatus => {
    if (record.state === 'approved') return { outcome: 'approved' };
    if (record.state === 'declined') return { outcome: 'declined', message: record.message ?? declined };
    return { outcome: 'started', reference: record.reference };
  };
  return {
    async start(request) {
      const recorded = await books.record(request.idempotencyKey, {
        state: 'pending',
        reference: `${connector === 'sandbox-bank' ? 'sbx_bank' : 'sbx_wallet'}_${request.transactionId}`,
        message: null,
        amountMinor: request.amountMinor,
        currency: request.currency,
      });
      return { reference: recorded.reference };
    },

    async complete(request) {
      const settled = await books.settle(
        request.idempotencyKey,
        'pending',
        request.decision === 'approve'
          ? { state: 'approved', message: null }
          : { state: 'declined', message: declined },
      );
      if (!settled) throw new NotProcessedError(`${connector}: no such payment`);
      const status = statusOf(settled);
      if (status.outcome === 'started') throw new NotProcessedError(`${connector}: the answer did not land`);
      return status;
    },

    async lookup(request) {
      const record = await books.find(request.idempotencyKey);
      return record ? statusOf(record) : { outcome: 'not_found' };
    },

    // A payment still waiting for the customer is closed as declined; an answered one keeps its answer.
    async cancel(request) {
      const settled = await books.settle(request.idempotencyKey, 'pending', {
        state: 'declined',
        message: 'The payment was not completed.',
      });
      if (!settled) throw new NotProcessedError(`${connector}: no such payment`);
      return statusOf(settled);
    },
  };
}
