import type { Api } from '../route';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

/**
 * Test mode only: pays into a transaction's deposit address (`simulateDeposit`), or closes its window now
 * (`closeDepositWindow`): docs/sandbox.md.
 */
export async function cryptoDepositRoutes(app: Api, deps: RouteDeps): Promise<void> {
  const depositDeps = { db: deps.db, temporal: deps.temporal, masterKey: deps.config.MASTER_KEY };
  app.route({
    ...endpoints.simulateDeposit,
    handler: async (request) =>
      deps.services.simulateDeposit(depositDeps, request.merchant, request.params.id, request.body),
  });
  app.route({
    ...endpoints.closeDepositWindow,
    handler: async (request) =>
      deps.services.closeDepositWindow(depositDeps, request.merchant, request.params.id),
  });
}
