import { named, ModeParams, type Api } from '../route';
import { z } from 'zod';
import { listPayinCurrencies } from '../../crypto/catalogue';
import { about, country, decimalAmount } from '../../schemas/fields';
import type { RouteDeps } from '../deps';
import { CurrencyList } from '../../schemas/answers';

export const CurrenciesRequest = named(
  'CurrenciesRequest',
  z.object({
    country: about(country('country', 'alpha2'), "The customer's country.", 'US'),
    amount: about(decimalAmount('amount'), 'The fiat amount to be paid.', 100),
  }),
);

export async function currencyRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.post(
    '/api/v1/:mode/crypto/currencies',
    {
      schema: {
        operationId: 'listPayinCurrencies',
        tags: ['Crypto'],
        summary: 'Crypto currencies for a country and amount',
        description: 'The catalogue entries offered in `country` for that fiat amount.',
        params: ModeParams,
        body: CurrenciesRequest,
      },
      config: {
        reference: {
          body: 'plain',
          answer: { schema: CurrencyList, description: 'The currencies and their networks.' },
        },
      },
      onRequest: app.authenticate,
    },
    async (request) => {
      const data = await listPayinCurrencies(deps.db, request.body.country, request.body.amount);
      return { message: 'Supported currencies retrieved successfully.', data };
    },
  );
}
