import { z } from 'zod';
import { JsonNumber } from '../../lib/json';
import { fieldError } from '../../platform/errors';
import { findWallet, listWallets } from '../../wallets/wallets';
import { feeFor } from '../../merchants/fees';
import { cardFields } from '../../schemas/card-fields';
import { refuseSandboxCardInLive } from '../validate';
import { about, minorAmount, walletId } from '../../schemas/fields';
import { SANDBOX_PAYOUT_CARDS } from '../../schemas/sandbox-cards';
import { named, type Api } from '../route';
import type { RouteDeps } from '../deps';
import { PayoutEstimate, WalletList } from '../../schemas/answers';

/** The card is validated as a payout's is, and used for nothing else: it is neither kept nor logged. */
export const PayoutEstimateRequest = named(
  'PayoutEstimateRequest',
  z.object({
    wallet_id: walletId(),
    amount: about(minorAmount('amount'), "The transaction's amount.", 500),
    card_number: cardFields(false, SANDBOX_PAYOUT_CARDS).card_number,
  }),
);

export async function walletRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.get(
    '/api/v1/wallet',
    {
      schema: {
        operationId: 'listWallets',
        tags: ['Payouts and wallets'],
        summary: "The key's mode's wallets",
        description: 'Every wallet of the mode of the key, with its available balance.',
      },
      config: { reference: { answer: { schema: WalletList, description: 'The wallets.' } } },
      onRequest: app.authenticate,
    },
    async (request) => {
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
  );

  // What a payout of `amount` would take from the wallet: the amount plus the merchant's payout fee
  // (the SDK's `esitimate_fee`, its spelling of the fields kept). Minor units, as the payout's amount.
  app.post(
    '/api/v1/wallet/estimate-payout',
    {
      schema: {
        operationId: 'estimatePayout',
        tags: ['Payouts and wallets'],
        summary: 'What a payout would take from a wallet',
        description:
          "The amount plus the merchant's payout fee (a percentage rounded up to the minor unit, plus a " +
          'fixed fee), and the balance. The card is validated as a payout’s and not kept.',
        body: PayoutEstimateRequest,
      },
      config: {
        reference: {
          body: 'encrypted',
          answer: { schema: PayoutEstimate, description: 'The estimate, in minor units.' },
        },
      },
      onRequest: app.authenticate,
      preValidation: app.decryptBody,
    },
    async (request) => {
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
  );
}
