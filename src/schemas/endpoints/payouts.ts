/** Card payouts from a wallet. */
import { endpoint, markdownTable } from './declare';
import { ModeParams, PayoutRequest } from '../requests';
import { PayoutTransaction } from '../answers';
import { SANDBOX_PAYOUT_TABLE } from '../sandbox-cards';

export const createPayout = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/payout',
  schema: {
    operationId: 'createPayout',
    tags: ['Payouts and wallets'],
    summary: 'Card payout from a wallet',
    description:
      "A currency other than the wallet's is `BLOCKED` (`Currency must match the wallet's currency`), " +
      'an inactive wallet too. More than the available balance (and in test mode any amount above 1000) ' +
      'is `FAILED`, `Insufficient funds.` Otherwise the amount and fee are reserved, then sent: ' +
      '`SUCCESS`, `FAILED` (the reserve released), or `PENDING` with `redirect_url` to the verification ' +
      `page.\n\nSandbox payout cards (test mode):\n\n${markdownTable(SANDBOX_PAYOUT_TABLE)}`,
    params: ModeParams,
    body: PayoutRequest,
    response: { 200: PayoutTransaction },
  },
  config: {
    creates: 'payout',
    reference: { body: 'encrypted', answer: { description: 'The payout.' } },
  },
});
