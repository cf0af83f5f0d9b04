import type { Api } from '../route';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

/** At most 100 a page, 20 unless asked. */
const pageSize = (limit: string | undefined) => (limit === undefined ? 20 : Number(limit));

/**
 * `GET /api/v1/{test|live}-transactions` and `GET /api/v1/{test|live}-wallet-transactions`, the vendor
 * SDK's `TXN` lists (docs/api.md): the mode is in the path, and must be the key's.
 */
export async function listRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.listTransactions,
    handler: async (request) => {
      const { limit, ...query } = request.query;
      return deps.services.listTransactions(deps.db, deps.config.MASTER_KEY, request.merchant, {
        ...query,
        limit: pageSize(limit),
      });
    },
  });
  app.route({
    ...endpoints.listWalletTransactions,
    handler: async (request) => {
      const { limit, status: _refused, ...query } = request.query;
      return deps.services.listWalletTransactions(deps.db, deps.config.MASTER_KEY, request.merchant, {
        ...query,
        limit: pageSize(limit),
      });
    },
  });
}
