import { ModeParams, type Api } from '../route';
import { z } from 'zod';
import {
  country,
  decimalAmount,
  email,
  fiatCurrency,
  httpUrl,
  ipAddress,
  optional,
  orderId,
  phoneNumber,
  terminalId,
  text,
  upperCode,
} from '../fields';
import { createPayin } from '../../transactions/payin';
import { replyCreated } from '../reply';
import type { RouteDeps } from '../deps';

export const PayinRequest = z.object({
  first_name: text('first_name'),
  last_name: text('last_name'),
  email: email(),
  amount: decimalAmount('amount'),
  currency: fiatCurrency('currency'),
  crypto_currency: upperCode('crypto_currency', 10),
  crypto_network: optional(upperCode('crypto_network', 40)),
  ip_address: ipAddress(),
  phone_number: phoneNumber(),
  address: text('address', { max: 255 }),
  country: country('country', 'alpha2'),
  order_id: optional(orderId()),
  redirect_url: httpUrl('redirect_url'),
  webhook_url: optional(httpUrl('webhook_url')),
  terminal_id: optional(terminalId()),
});

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
        reference: { body: 'encrypted', answer: { schema: 'PayinTransaction', description: 'The payin.' } },
      },
      onRequest: app.authenticate,
      preValidation: app.decryptBody,
    },
    async (request, reply) =>
      replyCreated(reply, await createPayin(deps.transactions, request.merchant, request.body)),
  );
}
