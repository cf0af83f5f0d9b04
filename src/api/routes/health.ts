import { sql } from 'drizzle-orm';
import type { Api } from '../route';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

export async function healthRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.health,
    handler: async () => ({ status: 'ok' }),
  });

  app.route({
    ...endpoints.readiness,
    handler: async (request, reply) => {
      // Shutting down: still serving, but a load balancer should send new requests elsewhere.
      if (deps.draining?.()) return reply.status(503).send({ status: 'draining' });
      const checks = await Promise.allSettled([
        deps.db.execute(sql`select 1`),
        deps.temporal.workflowService.getSystemInfo({}),
      ]);
      const [postgres, temporal] = checks.map((c) => (c.status === 'fulfilled' ? 'ok' : 'unavailable'));
      const ready = postgres === 'ok' && temporal === 'ok';
      if (!ready)
        request.log.warn(
          { checks: checks.map((c) => (c.status === 'rejected' ? String(c.reason) : 'ok')) },
          'not ready',
        );
      return reply
        .status(ready ? 200 : 503)
        .send({ status: ready ? 'ok' : 'unavailable', postgres, temporal });
    },
  });
}
