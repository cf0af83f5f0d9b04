import { replyCreated } from '../reply';
import { refuseSandboxCardInLive } from '../../platform/validation';
import type { Api } from '../route';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

export async function payoutRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.createPayout,
    handler: async (request, reply) => {
      refuseSandboxCardInLive(request.merchant.mode, request.body.card_number);
      return replyCreated(
        reply,
        await deps.services.createCardPayout(deps.transactions, request.merchant, request.body, {
          idempotencyKey: request.idempotencyKey,
        }),
      );
    },
  });
}
