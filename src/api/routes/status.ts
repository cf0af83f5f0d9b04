import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors';
import { lookupTransaction } from '../../transactions/create';
import { transactionBody } from '../../transactions/view';
import type { AppDeps } from '../app';

export async function statusRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get<{ Params: { mode: string; id: string } }>(
    '/api/:mode/status/:id',
    { onRequest: app.authenticate },
    async (request) => {
      const { merchantId, mode } = request.merchant;
      const row = await lookupTransaction(deps.db, merchantId, mode, request.params.id);
      if (!row) throw new ApiError('TRANSACTION_NOT_FOUND');
      return transactionBody(row);
    },
  );
}
