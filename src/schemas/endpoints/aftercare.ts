/** Refunds and test-mode chargebacks of settled transactions. */
import { endpoint } from './declare';
import { ChargebackRequest, ModeParams, RefundRequest } from '../requests';
import { Transaction } from '../answers';

export const refundTransaction = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/refund',
  schema: {
    operationId: 'refundTransaction',
    tags: ['Transactions'],
    summary: 'Full refund',
    description:
      'A full refund of a `SUCCESS` card payment or crypto payin, sent again as a webhook. Refused with ' +
      '`422`: `Transaction has already been refunded.`, `Transaction has already been charged back.`, ' +
      '`This transaction cannot be refunded.`, `The wallet no longer holds the amount this transaction ' +
      'credited.` Plain JSON (the vendor SDK adds `?Skip-Encryption=true`, which is ignored) or the ' +
      'envelope.',
    params: ModeParams,
    body: RefundRequest,
    response: { 200: Transaction },
  },
  config: {
    reference: {
      body: 'either',
      answer: { description: 'The transaction with `refund` set.' },
      refusals: ['TRANSACTION_NOT_FOUND'],
    },
  },
});

export const simulateChargeback = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/chargeback',
  schema: {
    operationId: 'simulateChargeback',
    tags: ['Transactions'],
    summary: 'Simulate a chargeback (test mode)',
    description:
      'The acquirer reporting a chargeback on a `SUCCESS` card payment or payin: `chargeback` set, the ' +
      "webhook sent again, a payin's wallet credit taken back. Refused as refunds are. Plain JSON or the " +
      'envelope.',
    params: ModeParams,
    body: ChargebackRequest,
    response: { 200: Transaction },
  },
  config: {
    reference: {
      body: 'either',
      answer: { description: 'The transaction with `chargeback` set.' },
      refusals: ['TRANSACTION_NOT_FOUND'],
      testOnly: true,
    },
  },
});
