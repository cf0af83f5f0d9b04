import type { Db } from '../../src/db/client';
import { NotProcessedError } from './errors';
import { sandboxRecords } from './sandbox-records';
import type { ApmProvider } from './types';

/**
 * A sandbox provider of one alternative payment method (`sandbox-bank`: a bank redirect, `sandbox-wallet`:
 * a wallet). It has no page of its own: the customer approves or declines on our stand-in page
 * (docs/hosted.md). Its books are keyed by the payment's idempotency key, so a repeat answers the same.
 */
export function sandboxApm(db: Db, connector: 'sandbox-bank' | 'sandbox-wallet'): ApmProvider {
  const books = sandboxRecords(db, connector, 'authorization');
  const declined =
    connector === 'sandbox-bank' ? 'Payment declined by the bank.' : 'Payment declined in the wallet.';
  return {
    async start(request) {
      const recorded = await books.record(request.idempotencyKey, {
        state: 'pending',
        reference: `${connector === 'sandbox-bank' ? 'sbx_bank' : 'sbx_wallet'}_${request.transactionId}`,
        message: null,
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
      if (settled.state === 'approved') return { outcome: 'approved' };
      return { outcome: 'declined', message: settled.message ?? declined };
    },
  };
}
