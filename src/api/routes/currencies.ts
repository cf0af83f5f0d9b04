import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { listPayinCurrencies } from '../../crypto/catalogue';
import { country, decimalAmount, parseInput } from '../fields';
import type { RouteDeps } from '../deps';

export const CurrenciesRequest = z.object({
  country: country('country', 'alpha2'),
  amount: decimalAmount('amount'),
});

export async function currencyRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.post('/api/v1/:mode/crypto/currencies', { onRequest: app.authenticate }, async (request) => {
    const input = parseInput(CurrenciesRequest, request.body ?? {});
    const data = await listPayinCurrencies(deps.db, input.country, input.amount);
    return { message: 'Supported currencies retrieved successfully.', data };
  });
}
