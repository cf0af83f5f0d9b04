import { named, ModeParams, type Api } from '../route';
import { z } from 'zod';
import { ApiError } from '../../platform/errors';
import { about, text, transactionId } from '../../schemas/fields';
import { requestAftercare } from '../../transactions/aftercare';
import type { RouteDeps } from '../deps';
import { Transaction } from '../../schemas/answers';

/** A refund is always of the whole amount: an `amount` must be that amount (checked against the transaction). */
export const RefundRequest = named(
  'RefundRequest',
  z.object({
    transaction_id: transactionId(),
    reason: about(text('reason', { max: 500 }), 'Why the transaction is refunded.', 'Customer request'),
    amount: about(
      z.unknown().optional(),
      'Leave out: a refund is always of the whole amount, and any other amount than the transaction’s is refused.',
    ),
  }),
);

export const ChargebackRequest = named('ChargebackRequest', z.object({ transaction_id: transactionId() }));

/**
 * Refunds (`POST /api/v1/{mode}/refund`) and test-mode chargebacks (`POST /api/v1/test/chargeback`) of
 * settled transactions, in plain JSON as the vendor SDK sends them or in the envelope (docs/api.md).
 */
export async function aftercareRoutes(app: Api, deps: RouteDeps): Promise<void> {
  const hooks = { onRequest: app.authenticate, preValidation: app.decryptBodyIfEnveloped };
  app.post(
    '/api/v1/:mode/refund',
    {
      schema: {
        operationId: 'refundTransaction',
        tags: ['Transactions'],
        summary: 'Full refund',
        description:
          'A full refund of a `SUCCESS` card payment or crypto payin, sent again as a webhook. Refused with ' +
          '`422`: `Transaction has already been refunded.`, `Transaction has already been charged back.`, ' +
          '`This transaction cannot be refunded.`, `The wallet no longer holds the amount this transaction ' +
          'credited.` Plain JSON (the vendor SDK adds `?Skip-Encryption=true`, which is ignored) or the ' +
          'envelope.',
        params: ModeParams,
        body: RefundRequest,
      },
      config: {
        reference: {
          body: 'either',
          answer: { schema: Transaction, description: 'The transaction with `refund` set.' },
          refusals: ['TRANSACTION_NOT_FOUND'],
        },
      },
      ...hooks,
    },
    async (request) => {
      const { transaction_id, reason, amount } = request.body;
      return requestAftercare(deps.transactions, request.merchant, 'refund', {
        transaction_id,
        reason,
        ...(amount === undefined ? {} : { amount }),
      });
    },
  );
  app.post(
    '/api/v1/:mode/chargeback',
    {
      schema: {
        operationId: 'simulateChargeback',
        tags: ['Transactions'],
        summary: 'Simulate a chargeback (test mode)',
        description:
          'The acquirer reporting a chargeback on a `SUCCESS` card payment or payin: `chargeback` set, the ' +
          "webhook sent again, a payin's wallet credit taken back. Refused as refunds are. Plain JSON or the " +
          'envelope.',
        params: ModeParams,
        body: ChargebackRequest,
      },
      config: {
        reference: {
          body: 'either',
          answer: { schema: Transaction, description: 'The transaction with `chargeback` set.' },
          refusals: ['TRANSACTION_NOT_FOUND'],
          testOnly: true,
        },
      },
      ...hooks,
    },
    async (request) => {
      if (request.merchant.mode !== 'test') throw new ApiError('ROUTE_NOT_FOUND');
      return requestAftercare(deps.transactions, request.merchant, 'chargeback', {
        ...request.body,
        reason: '',
      });
    },
  );
}
