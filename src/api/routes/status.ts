import { ApiError } from '../../platform/errors';
import { lookupTransaction } from '../../transactions/lookup';
import { transactionBody } from '../../transactions/view';
import { TransactionParams, type Api } from '../route';
import type { RouteDeps } from '../deps';
import { PayoutTransaction, Transaction } from '../../schemas/answers';

export async function statusRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.get(
    '/api/:mode/status/:id',
    {
      schema: {
        operationId: 'getTransactionStatus',
        tags: ['Transactions'],
        summary: 'A transaction by transaction id or order id',
        description:
          "`id` is looked up as a `transaction_id`, then as an `order_id`, among the calling merchant's " +
          'transactions of the mode.',
        params: TransactionParams,
      },
      config: {
        reference: {
          answer: { schema: Transaction, description: 'The transaction.' },
          refusals: ['TRANSACTION_NOT_FOUND'],
        },
      },
      onRequest: app.authenticate,
    },
    async (request) => {
      const row = await lookupTransaction(deps.db, request.merchant, request.params.id);
      if (!row) throw new ApiError('TRANSACTION_NOT_FOUND');
      return transactionBody(row);
    },
  );

  // The vendor SDK's `Payout.payout_status`: the same body, for payouts only.
  app.get(
    '/api/v1/:mode/payout/:id/status',
    {
      schema: {
        operationId: 'getPayoutStatus',
        tags: ['Payouts and wallets'],
        summary: 'A payout by transaction id or order id',
        description: 'The status body of a payout; any other transaction is `404`.',
        params: TransactionParams,
      },
      config: {
        reference: {
          answer: { schema: PayoutTransaction, description: 'The payout.' },
          refusals: ['TRANSACTION_NOT_FOUND'],
        },
      },
      onRequest: app.authenticate,
    },
    async (request) => {
      const row = await lookupTransaction(deps.db, request.merchant, request.params.id);
      if (!row || row.kind !== 'payout') throw new ApiError('TRANSACTION_NOT_FOUND');
      return transactionBody(row);
    },
  );
}
