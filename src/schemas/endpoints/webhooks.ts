/** The merchant's webhook events and their redelivery. */
import { endpoint } from './declare';
import { EventLogRequest, EventParams, ModeParams } from '../requests';
import { WebhookEventAnswer, WebhookEventPage } from '../answers';

export const listWebhookEvents = endpoint({
  method: 'GET',
  url: '/api/v1/:mode/webhooks/events',
  schema: {
    operationId: 'listWebhookEvents',
    tags: ['Webhook events'],
    summary: 'Webhook events with every delivery attempt',
    description: "The key's merchant's events of the mode, newest first, paged as the lists are.",
    params: ModeParams,
    querystring: EventLogRequest,
    response: { 200: WebhookEventPage },
  },
  config: { reference: { answer: { description: 'A page of events.' } } },
});

export const redeliverWebhookEvent = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/webhooks/events/:event_id/redeliver',
  schema: {
    operationId: 'redeliverWebhookEvent',
    tags: ['Webhook events'],
    summary: 'Send a webhook event again now',
    description:
      'A new delivery run of the same `event_id` and body, with its own retries. Asked again before its ' +
      'first attempt, it starts nothing more.',
    params: EventParams,
    response: { 200: WebhookEventAnswer },
  },
  config: {
    reference: {
      answer: { description: 'The event.' },
      customMessages: { ROUTE_NOT_FOUND: 'Webhook event not found.' },
    },
  },
});
