import { and, eq, isNull, sql } from 'drizzle-orm';
import { chainNodes } from '../../db/schema/index';
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
      const chains =
        postgres === 'ok'
          ? await deps.db
              .select({
                mode: chainNodes.mode,
                network: chainNodes.network,
                watched: sql<boolean>`coalesce(${chainNodes.leaseUntil} > now(), false)`,
              })
              .from(chainNodes)
              .where(and(eq(chainNodes.active, true), isNull(chainNodes.retiredAt)))
              .orderBy(chainNodes.mode, chainNodes.network)
              .catch(() => undefined)
          : undefined;
      if (!ready)
        request.log.warn(
          { checks: checks.map((c) => (c.status === 'rejected' ? String(c.reason) : 'ok')) },
          'not ready',
        );
      return reply
        .status(ready ? 200 : 503)
        .send({ status: ready ? 'ok' : 'unavailable', postgres, temporal, ...(chains ? { chains } : {}) });
    },
  });
}
