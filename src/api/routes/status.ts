import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../platform/errors';
import { lookupTransaction } from '../../transactions/lookup';
import { transactionBody } from '../../transactions/view';
import type { RouteDeps } from '../deps';

export async function statusRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.get<{ Params: { id: string } }>(
    '/api/:mode/status/:id',
    { onRequest: app.authenticate },
    async (request) => {
      const row = await lookupTransaction(deps.db, request.merchant, request.params.id);
      if (!row) throw new ApiError('TRANSACTION_NOT_FOUND');
      return transactionBody(row);
    },
  );

  // The vendor SDK's `Payout.payout_status`: the same body, for payouts only.
  app.get<{ Params: { id: string } }>(
    '/api/v1/:mode/payout/:id/status',
    { onRequest: app.authenticate },
    async (request) => {
      const row = await lookupTransaction(deps.db, request.merchant, request.params.id);
      if (!row || row.kind !== 'payout') throw new ApiError('TRANSACTION_NOT_FOUND');
      return transactionBody(row);
    },
  );
}
