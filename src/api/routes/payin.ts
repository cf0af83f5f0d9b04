import type { Api } from '../route';
import { replyCreated } from '../reply';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

export async function payinRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.createPayin,
    handler: async (request, reply) =>
      replyCreated(
        reply,
        await deps.services.createPayin(deps.transactions, request.merchant, request.body, {
          idempotencyKey: request.idempotencyKey,
        }),
      ),
  });
}
