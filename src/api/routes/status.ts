import { ApiError } from '../../platform/errors';
import { transactionBody } from '../../transactions/view';
import type { Api } from '../route';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

export async function statusRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.getTransactionStatus,
    handler: async (request) => {
      const row = await deps.services.lookupStatus(deps.db, request.merchant, request.params.id);
      if (!row) throw new ApiError('TRANSACTION_NOT_FOUND');
      return transactionBody(row);
    },
  });

  // Test mode: the customer's time runs out now (docs/sandbox.md).
  app.route({
    ...endpoints.expireCustomerWait,
    handler: async (request) =>
      deps.services.expireCustomerWait(
        { db: deps.db, temporal: deps.temporal },
        request.merchant,
        request.params.id,
      ),
  });

  // The vendor SDK's `Payout.payout_status`: the same body, for payouts only.
  app.route({
    ...endpoints.getPayoutStatus,
    handler: async (request) => {
      const row = await deps.services.lookupStatus(deps.db, request.merchant, request.params.id);
      if (!row || row.kind !== 'payout') throw new ApiError('TRANSACTION_NOT_FOUND');
      return transactionBody(row);
    },
  });
}
