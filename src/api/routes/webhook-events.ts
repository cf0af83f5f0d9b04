import { EventParams, ModeParams, type Api } from '../route';
import { z } from 'zod';
import { ApiError } from '../../platform/errors';
import { webhookSchedule } from '../../platform/config';
import { startWebhookDelivery } from '../../temporal/client';
import {
  findMerchantEvent,
  listWebhookEvents,
  prepareAuditedRedelivery,
} from '../../transactions/webhook-events';
import { about, optional, text, SPACE } from '../../schemas/fields';
import { nextCursor, pageLimit, period } from './lists';
import type { RouteDeps } from '../deps';
import { WebhookEventAnswer, WebhookEventPage } from '../../schemas/answers';

export const EventLogRequest = z.object({
  transaction_id: optional(about(text('transaction_id', { max: 191 }), "Only this transaction's events.")),
  delivered: optional(
    text('delivered', {
      max: 5,
      check: (v) => v === 'true' || v === 'false',
      rule: 'true or false',
      pattern: `^${SPACE}*(true|false)${SPACE}*$`,
    }).meta({
      description: 'Only delivered (`true`) or only undelivered (`false`) events.',
      enum: ['true', 'false'],
    }),
  ),
  ...period,
  nextCursor,
  limit: pageLimit,
});

/**
 * The merchant's webhook event log (docs/webhooks.md): every event of the key's mode with each delivery
 * attempt, and a redelivery of one event now.
 */
export async function webhookEventRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.get(
    '/api/v1/:mode/webhooks/events',
    {
      schema: {
        operationId: 'listWebhookEvents',
        tags: ['Webhook events'],
        summary: 'Webhook events with every delivery attempt',
        description: "The key's merchant's events of the mode, newest first, paged as the lists are.",
        params: ModeParams,
        querystring: EventLogRequest,
      },
      config: { reference: { answer: { schema: WebhookEventPage, description: 'A page of events.' } } },
      onRequest: app.authenticate,
    },
    async (request) => {
      const { delivered, limit, ...query } = request.query;
      return listWebhookEvents(deps.db, deps.config.MASTER_KEY, request.merchant, {
        ...query,
        ...(delivered === undefined ? {} : { delivered: delivered === 'true' }),
        limit: limit === undefined ? 20 : Number(limit),
      });
    },
  );

  app.post(
    '/api/v1/:mode/webhooks/events/:event_id/redeliver',
    {
      schema: {
        operationId: 'redeliverWebhookEvent',
        tags: ['Webhook events'],
        summary: 'Send a webhook event again now',
        description:
          'A new delivery run of the same `event_id` and body, with its own retries. Asked again before its ' +
          'first attempt, it starts nothing more.',
        params: EventParams,
      },
      config: {
        reference: {
          answer: { schema: WebhookEventAnswer, description: 'The event.' },
          customMessages: { ROUTE_NOT_FOUND: 'Webhook event not found.' },
        },
      },
      onRequest: app.authenticate,
    },
    async (request) => {
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
  );
}
