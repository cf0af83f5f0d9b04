import type { Api } from '../route';
import { ApiError } from '../../platform/errors';
import { webhookSchedule } from '../../platform/config';
import { startWebhookDelivery } from '../../temporal/client';
import {
  findMerchantEvent,
  listWebhookEvents,
  prepareAuditedRedelivery,
} from '../../transactions/webhook-events';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

/**
 * The merchant's webhook event log (docs/webhooks.md): every event of the key's mode with each delivery
 * attempt, and a redelivery of one event now.
 */
export async function webhookEventRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.listWebhookEvents,
    onRequest: app.authenticate,
    handler: async (request) => {
      const { delivered, limit, ...query } = request.query;
      return listWebhookEvents(deps.db, deps.config.MASTER_KEY, request.merchant, {
        ...query,
        ...(delivered === undefined ? {} : { delivered: delivered === 'true' }),
        limit: limit === undefined ? 20 : Number(limit),
      });
    },
  });

  app.route({
    ...endpoints.redeliverWebhookEvent,
    onRequest: app.authenticate,
    handler: async (request) => {
      const { event_id: eventId } = request.params;
      const event = await findMerchantEvent(deps.db, request.merchant, eventId);
      if (!event) throw new ApiError('ROUTE_NOT_FOUND', 'Webhook event not found.');
      const runs = await prepareAuditedRedelivery(
        deps.db,
        event.event_id,
        webhookSchedule(deps.config),
        `merchant:${request.merchant.merchantId}`,
      );
      for (const run of runs) await startWebhookDelivery(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE, run);
      return {
        message: 'Webhook redelivery started.',
        data: (await findMerchantEvent(deps.db, request.merchant, eventId)) ?? event,
      };
    },
  });
}
