import type { Api } from '../route';
import { replyCreated } from '../reply';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

/** `POST /api/v1/{mode}/apm` (envelope): answers `REDIRECT` to the page listing the methods. */
export async function apmRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.createApmPayment,
    handler: async (request, reply) =>
      replyCreated(
        reply,
        await deps.services.createApmPayment(deps.transactions, request.merchant, request.body, {
          idempotencyKey: request.idempotencyKey,
        }),
      ),
  });
}
