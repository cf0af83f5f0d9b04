import type { Api } from '../route';
import { replyCreated } from '../reply';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

export async function rampRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.createRamp,
    handler: async (request, reply) =>
      replyCreated(
        reply,
        await deps.services.createRamp(deps.transactions, request.merchant, request.body, {
          idempotencyKey: request.idempotencyKey,
        }),
      ),
  });
}
