import { replyCreated } from '../reply';
import type { Api } from '../route';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

export async function cardRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.createCardPayment,
    handler: async (request, reply) =>
      replyCreated(
        reply,
        await deps.services.createCardPayment(deps.transactions, request.merchant, request.body, {
          idempotencyKey: request.idempotencyKey,
        }),
      ),
  });
}
