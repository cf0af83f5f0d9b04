import type { Api } from '../route';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

/**
 * Refunds (`POST /api/v1/{mode}/refund`) and test-mode chargebacks (`POST /api/v1/test/chargeback`) of
 * settled transactions, in plain JSON as the vendor SDK sends them or in the envelope (docs/api.md).
 */
export async function aftercareRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.refundTransaction,
    handler: async (request) => {
      const { transaction_id, reason, amount } = request.body;
      return deps.services.requestAftercare(deps.transactions, request.merchant, 'refund', {
        transaction_id,
        reason,
        ...(amount === undefined ? {} : { amount }),
      });
    },
  });
  app.route({
    ...endpoints.simulateChargeback,
    handler: async (request) => {
      return deps.services.requestAftercare(deps.transactions, request.merchant, 'chargeback', {
        ...request.body,
        reason: '',
      });
    },
  });
}
