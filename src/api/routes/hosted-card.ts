import type { Api } from '../route';
import { replyCreated } from '../reply';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

/** `POST /api/v1/{mode}/hosted/card` (envelope): answers `REDIRECT` to the hosted payment page. */
export async function hostedCardRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.createHostedCardPayment,
    handler: async (request, reply) =>
      replyCreated(
        reply,
        await deps.services.createHostedCardPayment(deps.transactions, request.merchant, request.body, {
          idempotencyKey: request.idempotencyKey,
        }),
      ),
  });
}
