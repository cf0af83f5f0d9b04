/** Looking transactions up: one by id or order id, and pages of them. */
import { endpoint } from './declare';
import { ListRequest, ModeParams, TransactionParams, WalletListRequest } from '../requests';
import { PayoutTransaction, Transaction, TransactionPage, WalletTransactionPage } from '../answers';

export const getTransactionStatus = endpoint({
  method: 'GET',
  url: '/api/:mode/status/:id',
  schema: {
    operationId: 'getTransactionStatus',
    tags: ['Transactions'],
    summary: 'A transaction by transaction id or order id',
    description:
      "`id` is looked up as a `transaction_id`, then as an `order_id`, among the calling merchant's " +
      'transactions of the mode.',
    params: TransactionParams,
    response: { 200: Transaction },
  },
  config: {
    reference: {
      answer: { description: 'The transaction.' },
      refusals: ['TRANSACTION_NOT_FOUND'],
    },
  },
});

export const expireCustomerWait = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/transactions/:id/expire',
  schema: {
    operationId: 'expireCustomerWait',
    tags: ['Transactions'],
    summary: "End the customer's wait now (test mode)",
    description:
      'Ends what the transaction waits on from its customer at once, as if its time had run out: a 3-D ' +
      'Secure challenge or a hosted card page nobody answers is abandoned (`FAILED`, `Transaction ' +
      "abandoned.`), a payout's verification page or an APM provider's page expires as it would. The " +
      'outcome follows in a moment: ask the status endpoint (docs/sandbox.md). A crypto deposit window is ' +
      'closed with `closeDepositWindow`.',
    params: TransactionParams,
    response: { 200: Transaction },
  },
  config: {
    reference: {
      answer: { description: 'The transaction, as it stood when its wait ended.' },
      refusals: ['TRANSACTION_NOT_FOUND'],
      testOnly: true,
    },
  },
});

export const getPayoutStatus = endpoint({
  method: 'GET',
  url: '/api/v1/:mode/payout/:id/status',
  schema: {
    operationId: 'getPayoutStatus',
    tags: ['Payouts and wallets'],
    summary: 'A payout by transaction id or order id',
    description: 'The status body of a payout; any other transaction is `404`.',
    params: TransactionParams,
    response: { 200: PayoutTransaction },
  },
  config: {
    reference: {
      answer: { description: 'The payout.' },
      refusals: ['TRANSACTION_NOT_FOUND'],
    },
  },
});

export const listTransactions = endpoint({
  method: 'GET',
  url: '/api/v1/:mode-transactions',
  schema: {
    operationId: 'listTransactions',
    tags: ['Transactions'],
    summary: 'Transactions, newest first',
    description:
      "The key's mode's transactions, paged by keyset: a page does not move while new transactions " +
      "arrive. The path's mode must be the key's (`401` otherwise). A cursor is signed for the merchant, " +
      'mode and list that issued it; any other is `422`.',
    params: ModeParams,
    querystring: ListRequest,
    response: { 200: TransactionPage },
  },
  config: {
    reference: { answer: { description: 'A page of transactions.' } },
  },
});

export const listWalletTransactions = endpoint({
  method: 'GET',
  url: '/api/v1/:mode-wallet-transactions',
  schema: {
    operationId: 'listWalletTransactions',
    tags: ['Transactions'],
    summary: 'Wallet ledger entries, newest first',
    description: "The entries of the key's mode's wallets, paged as the transactions are.",
    params: ModeParams,
    querystring: WalletListRequest,
    response: { 200: WalletTransactionPage },
  },
  config: {
    reference: { answer: { description: 'A page of ledger entries.' } },
  },
});
