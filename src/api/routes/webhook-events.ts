import type { Api } from '../route';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

/**
 * The merchant's webhook event log (docs/webhooks.md): every event of the key's mode with each delivery
 * attempt, and a redelivery of one event now.
 */
export async function webhookEventRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.listWebhookEvents,
    handler: async (request) => {
      const { delivered, limit, ...query } = request.query;
      return deps.services.listWebhookEvents(deps.db, deps.config.MASTER_KEY, request.merchant, {
        ...query,
        ...(delivered === undefined ? {} : { delivered: delivered === 'true' }),
        limit: limit === undefined ? 20 : Number(limit),
      });
    },
  });

  app.route({
    ...endpoints.redeliverWebhookEvent,
    handler: async (request) => {
      const event = await deps.services.redeliverMerchantEvent(
        deps,
        request.merchant,
        request.params.event_id,
      );
      return { message: 'Webhook redelivery started.', data: event };
    },
  });
}
