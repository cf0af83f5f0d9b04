/** Card payments: raw card data, the hosted card page, and alternative payment methods. */
import { endpoint, markdownTable } from './declare';
import { HostedCardRequest, ModeParams, CardRequest } from '../requests';
import { ApmTransaction, CardTransaction } from '../answers';
import { SANDBOX_CARD_TABLE } from '../sandbox-cards';

export const createCardPayment = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/card',
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
    response: { 200: CardTransaction },
  },
  config: {
    creates: 'card',
    reference: {
      body: 'encrypted',
      answer: { description: 'The card payment.' },
    },
  },
});

export const createHostedCardPayment = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/hosted/card',
  schema: {
    operationId: 'createHostedCardPayment',
    tags: ['Card payments'],
    summary: 'Card payment on our hosted page',
    description:
      'The card payment without the card: answers `REDIRECT` to our payment page, where the customer ' +
      'types the card; from there it continues as a card payment (docs/hosted.md).',
    params: ModeParams,
    body: HostedCardRequest,
    response: { 200: CardTransaction },
  },
  config: {
    creates: 'card',
    reference: {
      body: 'encrypted',
      answer: { description: 'The card payment, waiting on the hosted page.' },
    },
  },
});

export const createApmPayment = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/apm',
  schema: {
    operationId: 'createApmPayment',
    tags: ['Card payments'],
    summary: 'Alternative payment method (bank transfer, wallet)',
    description:
      "The hosted card payment's fields. Answers `REDIRECT` to our page offering the methods the " +
      "merchant's terminals take; the customer approves or declines at the provider (docs/hosted.md).",
    params: ModeParams,
    body: HostedCardRequest,
    response: { 200: ApmTransaction },
  },
  config: {
    creates: 'apm',
    reference: {
      body: 'encrypted',
      answer: { description: 'The payment, waiting on the methods page.' },
    },
  },
});
