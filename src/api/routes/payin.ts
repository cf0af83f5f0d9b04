import { named, ModeParams, type Api } from '../route';
import { z } from 'zod';
import { cardholderFields } from '../../schemas/card-fields';
import {
  about,
  country,
  cryptoCurrency,
  cryptoNetwork,
  decimalAmount,
  fiatCurrency,
  optional,
  orderId,
  redirectUrl,
  terminalId,
  webhookUrl,
} from '../../schemas/fields';
import { createPayin } from '../../transactions/payin';
import { replyCreated } from '../reply';
import type { RouteDeps } from '../deps';
import { PayinTransaction } from '../../schemas/answers';

export const PayinRequest = named(
  'PayinRequest',
  z.object({
    first_name: cardholderFields.first_name,
    last_name: cardholderFields.last_name,
    email: cardholderFields.email,
    amount: about(decimalAmount('amount'), 'The fiat amount to be paid, in `currency`.', 100),
    currency: about(
      fiatCurrency('currency'),
      'The fiat currency; the merchant needs an active wallet in it.',
      'USD',
    ),
    crypto_currency: cryptoCurrency(),
    crypto_network: cryptoNetwork(),
    ip_address: cardholderFields.ip_address,
    phone_number: cardholderFields.phone_number,
    address: cardholderFields.address,
    country: about(country('country', 'alpha2'), "The customer's country.", 'US'),
    order_id: optional(orderId()),
    redirect_url: redirectUrl(),
    webhook_url: optional(webhookUrl()),
    terminal_id: optional(terminalId()),
  }),
);

export async function payinRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.post(
    '/api/v1/:mode/crypto/payin',
    {
      schema: {
        operationId: 'createPayin',
        tags: ['Crypto'],
        summary: 'Crypto payin',
        description:
          'Answers `REDIRECT` to the crypto checkout page with the deposit address, the crypto amount and ' +
          'the deadline. On success the fiat amount is credited to the wallet in `currency`.',
        params: ModeParams,
        body: PayinRequest,
      },
      config: {
        creates: 'crypto_payin',
        reference: { body: 'encrypted', answer: { schema: PayinTransaction, description: 'The payin.' } },
      },
      onRequest: app.authenticate,
      preValidation: app.decryptBody,
    },
    async (request, reply) =>
      replyCreated(reply, await createPayin(deps.transactions, request.merchant, request.body)),
  );
}
