import { JsonNumber } from '../../lib/json';
import { refuseSandboxCardInLive } from '../../platform/validation';
import type { Api } from '../route';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

export async function walletRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.listWallets,
    handler: async (request) => {
      const rows = await deps.services.listWallets(deps.db, request.merchant);
      return {
        message: 'Wallets retrieved successfully.',
        data: rows.map((w) => ({
          wallet_id: w.id,
          currency: w.currency,
          amount: new JsonNumber(w.available.toString()),
          // Every wallet pays out to cards: card payouts are the only payout method (docs/api.md).
          payment_method: 'CARD',
          status: w.status,
        })),
      };
    },
  });

  // What a payout of `amount` would take from the wallet: the amount plus the merchant's payout fee
  // (the SDK's `esitimate_fee`, its spelling of the fields kept). Minor units, as the payout's amount.
  app.route({
    ...endpoints.estimatePayout,
    handler: async (request) => {
      refuseSandboxCardInLive(request.merchant.mode, request.body.card_number);
      const estimate = await deps.services.estimatePayout(deps.db, request.merchant, request.body);
      return {
        message: 'Payout fee estimated successfully.',
        data: {
          amount_requried: new JsonNumber(estimate.required.toString()),
          wallet_balance: new JsonNumber(estimate.balance.toString()),
          total_fee: new JsonNumber(estimate.fee.toString()),
        },
      };
    },
  });
}
