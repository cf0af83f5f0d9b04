/** The merchant's wallets and what a payout would take from one. */
import { endpoint } from './declare';
import { PayoutEstimateRequest } from '../requests';
import { PayoutEstimate, WalletList } from '../answers';

export const listWallets = endpoint({
  method: 'GET',
  url: '/api/v1/wallet',
  schema: {
    operationId: 'listWallets',
    tags: ['Payouts and wallets'],
    summary: "The key's mode's wallets",
    description: 'Every wallet of the mode of the key, with its available balance.',
    response: { 200: WalletList },
  },
  config: { reference: { answer: { description: 'The wallets.' } } },
});

export const estimatePayout = endpoint({
  method: 'POST',
  url: '/api/v1/wallet/estimate-payout',
  schema: {
    operationId: 'estimatePayout',
    tags: ['Payouts and wallets'],
    summary: 'What a payout would take from a wallet',
    description:
      "The amount plus the merchant's payout fee (a percentage rounded up to the minor unit, plus a " +
      'fixed fee), and the balance. The card is validated as a payout’s and not kept.',
    body: PayoutEstimateRequest,
    response: { 200: PayoutEstimate },
  },
  config: {
    reference: {
      body: 'encrypted',
      answer: { description: 'The estimate, in minor units.' },
    },
  },
});
