/** Crypto payins and on/off-ramps, test deposits, and the payin currencies. */
import { endpoint } from './declare';
import {
  CurrenciesRequest,
  DepositRequest,
  ModeParams,
  PayinRequest,
  RampRequest,
  TransactionParams,
} from '../requests';
import {
  CryptoTransaction,
  CurrencyList,
  DepositAnswer,
  PayinTransaction,
  RampTransaction,
} from '../answers';

export const createPayin = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/crypto/payin',
  schema: {
    operationId: 'createPayin',
    tags: ['Crypto'],
    summary: 'Crypto payin',
    description:
      'Answers `REDIRECT` to the crypto checkout page with the deposit address, the crypto amount and ' +
      'the deadline. On success the fiat amount is credited to the wallet in `currency`.',
    params: ModeParams,
    body: PayinRequest,
    response: { 200: PayinTransaction },
  },
  config: {
    creates: 'crypto_payin',
    reference: { body: 'encrypted', answer: { description: 'The payin.' } },
  },
});

export const createRamp = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/crypto',
  schema: {
    operationId: 'createRamp',
    tags: ['Crypto'],
    summary: 'Crypto ramp (ONRAMP or OFFRAMP)',
    description:
      'Answers `REDIRECT` to the crypto checkout page with the quote in `data`, locked for the ' +
      "transaction's window. ONRAMP: the customer pays the fiat, then the crypto goes to " +
      '`wallet_address` (30 minutes). OFFRAMP: the page shows a deposit address and a 60-minute ' +
      'deadline; deposits settle as in docs/settlement.md, then the fiat is paid out.',
    params: ModeParams,
    body: RampRequest,
    response: { 200: RampTransaction },
  },
  config: {
    creates: 'ramp',
    reference: {
      body: 'encrypted',
      answer: { description: 'The ramp and its quote.' },
    },
  },
});

export const simulateDeposit = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/crypto/:id/deposit',
  schema: {
    operationId: 'simulateDeposit',
    tags: ['Crypto'],
    summary: 'Simulate a deposit (test mode)',
    description:
      "Pays into an OFFRAMP's or payin's deposit address: counted, refunded (after completion or the " +
      'window), held (the transaction had closed) or duplicate. On a chain watched on a real node it is ' +
      'a real transfer, answered `pending`.',
    params: TransactionParams,
    body: DepositRequest,
    response: { 200: DepositAnswer },
  },
  config: {
    reference: {
      body: 'plain',
      answer: { description: 'The transaction and the deposit.' },
      refusals: ['TRANSACTION_NOT_FOUND'],
      testOnly: true,
    },
  },
});

export const closeDepositWindow = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/crypto/:id/close-window',
  schema: {
    operationId: 'closeDepositWindow',
    tags: ['Crypto'],
    summary: 'Close a deposit window now (test mode)',
    description:
      "Ends an OFFRAMP's or payin's deposit window at once, as if its time had run out: the transaction " +
      'settles on what it has received (an underpayment fails with its deposits refunded, unless the ' +
      'merchant accepts partial amounts; nothing received is `Transaction expired.`). Answers the ' +
      'transaction once its window has closed; the webhook follows as usual (docs/sandbox.md).',
    params: TransactionParams,
    response: { 200: CryptoTransaction },
  },
  config: {
    reference: {
      answer: { description: 'The transaction, its window closed.' },
      refusals: ['TRANSACTION_NOT_FOUND'],
      testOnly: true,
    },
  },
});

export const listPayinCurrencies = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/crypto/currencies',
  schema: {
    operationId: 'listPayinCurrencies',
    tags: ['Crypto'],
    summary: 'Crypto currencies for a country and amount',
    description:
      'The catalogue entries offered in `country` for that fiat amount; in live mode only the networks a live node watches, never OMNI.',
    params: ModeParams,
    body: CurrenciesRequest,
    response: { 200: CurrencyList },
  },
  config: {
    reference: {
      body: 'plain',
      answer: { description: 'The currencies and their networks.' },
    },
  },
});
