import { z } from 'zod';
import { redirectUrl } from '../../schemas/fields';
import { cardFields, cardholderFields, checkCardExpiry, closingFields } from '../../schemas/card-fields';
import { createCardPayment } from '../../transactions/card';
import { SANDBOX_CARD_TABLE } from '../../schemas/sandbox-cards';
import { replyCreated } from '../reply';
import { named, markdownTable, ModeParams, type Api } from '../route';
import type { RouteDeps } from '../deps';
import { CardTransaction } from '../../schemas/answers';

export const CardRequest = named(
  'CardRequest',
  z
    .object({
      ...cardholderFields,
      ...cardFields(true),
      redirect_url: redirectUrl(),
      ...closingFields,
    })
    .superRefine(checkCardExpiry),
);

export async function cardRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.post(
    '/api/v1/:mode/card',
    {
      schema: {
        operationId: 'createCardPayment',
        tags: ['Card payments'],
        summary: 'Card payment from raw card data',
        description:
          'Answers `REDIRECT` (3-D Secure: send the customer to `redirect_url`), `SUCCESS` (frictionless) or ' +
          "`FAILED` with the issuer's message. Without `terminal_id` the merchant's card terminals are tried " +
          'by priority: a technical failure the connector certainly did not process moves to the next, a ' +
          'decline does not. A challenge not completed within 15 minutes ends `FAILED`, ' +
          '`Transaction abandoned.`\n\nSandbox cards (test mode):\n\n' +
          markdownTable(SANDBOX_CARD_TABLE),
        params: ModeParams,
        body: CardRequest,
      },
      config: {
        creates: 'card',
        reference: {
          body: 'encrypted',
          answer: { schema: CardTransaction, description: 'The card payment.' },
        },
      },
      onRequest: app.authenticate,
      preValidation: app.decryptBody,
    },
    async (request, reply) =>
      replyCreated(reply, await createCardPayment(deps.transactions, request.merchant, request.body)),
  );
}
