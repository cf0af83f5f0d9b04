import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../platform/errors';
import { parseInput, text } from '../fields';
import { requestAftercare } from '../../transactions/aftercare';
import type { RouteDeps } from '../deps';

/** A refund is always of the whole amount: an `amount` must be that amount (checked against the transaction). */
export const RefundRequest = z.object({
  transaction_id: text('transaction_id', { max: 191 }),
  reason: text('reason', { max: 500 }),
  amount: z.unknown().optional(),
});

export const ChargebackRequest = z.object({
  transaction_id: text('transaction_id', { max: 191 }),
});

/**
 * Refunds (`POST /api/v1/{mode}/refund`) and test-mode chargebacks (`POST /api/v1/test/chargeback`) of
 * settled transactions, in plain JSON as the vendor SDK sends them or in the envelope (docs/api.md).
 */
export async function aftercareRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const options = { onRequest: app.authenticate, preValidation: app.decryptBodyIfEnveloped };
  app.post('/api/v1/:mode/refund', options, async (request) => {
    const { transaction_id, reason, amount } = parseInput(RefundRequest, request.body ?? {});
    return requestAftercare(deps.transactions, request.merchant, 'refund', {
      transaction_id,
      reason,
      ...(amount === undefined ? {} : { amount }),
    });
  });
  app.post('/api/v1/:mode/chargeback', options, async (request) => {
    if (request.merchant.mode !== 'test') throw new ApiError('ROUTE_NOT_FOUND');
    const input = parseInput(ChargebackRequest, request.body ?? {});
    return requestAftercare(deps.transactions, request.merchant, 'chargeback', { ...input, reason: '' });
  });
}
