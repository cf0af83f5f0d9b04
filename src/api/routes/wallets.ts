import { JsonNumber } from '../../lib/json';
import { fieldError } from '../../platform/errors';
import { findWallet, listWallets } from '../../wallets/wallets';
import { feeFor } from '../../merchants/fees';
import { refuseSandboxCardInLive } from '../validate';
import type { Api } from '../route';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

export async function walletRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.listWallets,
    onRequest: app.authenticate,
    handler: async (request) => {
      const rows = await listWallets(deps.db, request.merchant);
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
    onRequest: app.authenticate,
    preValidation: app.decryptBody,
    handler: async (request) => {
      const input = request.body;
      refuseSandboxCardInLive(request.merchant.mode, input.card_number);
      const wallet = await findWallet(deps.db, request.merchant, input.wallet_id);
      if (!wallet) fieldError('wallet_id', 'The selected wallet id is invalid.');
      const fee = await feeFor(deps.db, request.merchant, 'payout', wallet.currency, input.amount);
      return {
        message: 'Payout fee estimated successfully.',
        data: {
          amount_requried: new JsonNumber((input.amount + fee).toString()),
          wallet_balance: new JsonNumber(wallet.available.toString()),
          total_fee: new JsonNumber(fee.toString()),
        },
      };
    },
  });
}
