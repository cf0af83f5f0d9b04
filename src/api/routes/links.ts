import type { RouteDeps } from '../deps';
import type { Api } from '../route';
import * as endpoints from '../../schemas/endpoints';

/**
 * Payment page templates (`GET /api/v1/payment-templates`) and card payment links
 * (`POST /api/v1/payment-link`, plain or in the envelope) for the key's mode (docs/hosted.md); in test
 * mode, a link expired now (docs/sandbox.md).
 */
export async function linkRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.listPaymentTemplates,
    handler: async (request) => ({
      message: 'Payment templates retrieved successfully.',
      data: await deps.services.listTemplates(deps.db, request.merchant),
    }),
  });

  app.route({
    ...endpoints.createPaymentLink,
    handler: async (request) => {
      const url = await deps.services.createLink(deps.transactions, request.merchant, request.body);
      return { message: 'Payment link created successfully.', data: url };
    },
  });

  app.route({
    ...endpoints.createCryptoPaymentLink,
    handler: async (request) => {
      const input = request.body;
      const { transaction_type, fiat_currency, crypto_currency, fiat_amount, crypto_amount } = input;
      const url = await deps.services.createLink(deps.transactions, request.merchant, {
        payment_template_id: input.payment_template_id,
        expiry_date: input.expiry_date,
        terminal_id: input.terminal_id,
        order_id: input.order_id,
        crypto: {
          transaction_type,
          fiat_currency,
          crypto_currency,
          ...(input.crypto_network === undefined ? {} : { crypto_network: input.crypto_network }),
          ...(fiat_amount === undefined ? {} : { fiat_amount }),
          ...(crypto_amount === undefined ? {} : { crypto_amount }),
        },
      });
      return { message: 'Payment link created successfully.', data: url };
    },
  });

  app.route({
    ...endpoints.expirePaymentLink,
    handler: async (request) => {
      const link = await deps.services.expireLink(deps, request.merchant, request.params.id);
      const message =
        link.status === 'expired' ? 'Payment link expired.' : 'This payment link has already been used.';
      return { message, data: link };
    },
  });
}
