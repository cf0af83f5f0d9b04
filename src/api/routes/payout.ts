import { z } from 'zod';
import { about, minorAmount, walletId } from '../../schemas/fields';
import { cardFields, cardholderFields, checkCardExpiry, closingFields } from '../../schemas/card-fields';
import { createCardPayout } from '../../transactions/payout';
import { SANDBOX_PAYOUT_CARDS, SANDBOX_PAYOUT_TABLE } from '../../schemas/sandbox-cards';
import { replyCreated } from '../reply';
import { refuseSandboxCardInLive } from '../validate';
import { named, markdownTable, ModeParams, type Api } from '../route';
import type { RouteDeps } from '../deps';
import { PayoutTransaction } from '../../schemas/answers';

/** It takes the interface's payout test cards, which fail the Luhn check: live mode refuses them. */
export const PayoutRequest = named(
  'PayoutRequest',
  z
    .object({
      wallet_id: walletId('The wallet the payout is paid from; its currency must match.'),
      ...cardholderFields,
      amount: about(minorAmount('amount'), "The transaction's amount.", 500),
      ...cardFields(false, SANDBOX_PAYOUT_CARDS),
      ...closingFields,
    })
    .superRefine(checkCardExpiry),
);

export async function payoutRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.post(
    '/api/v1/:mode/payout',
    {
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
      },
      config: {
        creates: 'payout',
        reference: { body: 'encrypted', answer: { schema: PayoutTransaction, description: 'The payout.' } },
      },
      onRequest: app.authenticate,
      preValidation: app.decryptBody,
    },
    async (request, reply) => {
      refuseSandboxCardInLive(request.merchant.mode, request.body.card_number);
      return replyCreated(reply, await createCardPayout(deps.transactions, request.merchant, request.body));
    },
  );
}
