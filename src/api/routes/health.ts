import type { FastifyInstance } from 'fastify';
import { sql } from 'drizzle-orm';
import type { RouteDeps } from '../deps';

export async function healthRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (request, reply) => {
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
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', postgres, temporal });
  });
}
