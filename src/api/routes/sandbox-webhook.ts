import type { FastifyInstance } from 'fastify';
import { FAILING_WEBHOOK_PATH, failingWebhookTakes } from '../../sandbox/failing-webhook';
import type { RouteDeps } from '../deps';

/**
 * Test mode's rehearsal webhook endpoint (docs/sandbox.md): give it as `webhook_url` and the service's
 * deliveries fail until ops retry them. It is called by the service itself, so it wants no key.
 */
export async function sandboxWebhookRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const unlisted = 'a sandbox endpoint the service itself calls, for rehearsing ops (docs/sandbox.md)';
  app.post(FAILING_WEBHOOK_PATH, { config: { unlisted } }, async (request, reply) => {
    if (await failingWebhookTakes(deps.db, request.body)) return { message: 'Webhook received.' };
    return reply.status(503).send({
      message: 'This sandbox endpoint fails every delivery until ops retry it (docs/sandbox.md).',
    });
  });
}
