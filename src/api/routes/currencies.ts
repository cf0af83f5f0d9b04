import type { Api } from '../route';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

export async function currencyRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.listPayinCurrencies,
    handler: async (request) => {
      const data = await deps.services.listPayinCurrencies(
        deps.db,
        request.body.country,
        request.body.amount,
        request.merchant.mode === 'live' ? { sandboxInLive: deps.config.ALLOW_SANDBOX_IN_LIVE } : undefined,
      );
      return { message: 'Supported currencies retrieved successfully.', data };
    },
  });
}
