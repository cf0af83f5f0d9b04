import type { z } from 'zod';
import type { TransactionKind } from '../lib/vocabulary';
import type { ErrorCode } from './errors';
import { SANDBOX_CARD_TABLE, SANDBOX_PAYOUT_TABLE } from './sandbox-cards';
import {
  ChargebackRequest,
  CryptoLinkRequest,
  CurrenciesRequest,
  DepositRequest,
  EventLogRequest,
  EventParams,
  HostedCardRequest,
  LinkRequest,
  ListRequest,
  ModeParams,
  PayinRequest,
  PayoutEstimateRequest,
  PayoutRequest,
  RampRequest,
  RefundRequest,
  TransactionParams,
  WalletListRequest,
  CardRequest,
} from './requests';
import {
  ApmTransaction,
  CardTransaction,
  CurrencyList,
  DepositAnswer,
  Health,
  PayinTransaction,
  PaymentLink,
  PayoutEstimate,
  PayoutTransaction,
  RampTransaction,
  Readiness,
  TemplateList,
  Transaction,
  TransactionPage,
  WalletList,
  WalletTransactionPage,
  WebhookEventAnswer,
  WebhookEventPage,
} from './answers';

/**
 * Every endpoint of the merchant API, declared once: method, path, what it takes (./requests.ts) and
 * answers (./answers.ts), and how the reference documents it. The routes (src/api/routes) add their hooks
 * and handler to these; the reference, the metrics and the typed client (src/client) read them.
 */

/** How the reference documents an endpoint beyond its schemas. */
export interface Reference {
  /** How the body comes: the encrypted envelope only, plain JSON only, or either. */
  body?: 'encrypted' | 'plain' | 'either';
  /** What the success answer is (its schema: `schema.response`; Prometheus text has none). */
  answer: { description: string };
  /** Errors beyond those every operation of its shape can give. */
  refusals?: ErrorCode[];
  /** Messages other than the catalogue's, where the route words one its own way. */
  customMessages?: Partial<Record<ErrorCode, string>>;
  /** Taken without a key. */
  open?: boolean;
  /** Served in test mode only: documented under `test` instead of `{mode}`, 404 in live mode. */
  testOnly?: boolean;
}

export interface Endpoint {
  method: 'GET' | 'POST';
  /** Fastify's form: `:name` for a parameter. */
  url: string;
  schema: {
    operationId: string;
    tags: readonly string[];
    summary: string;
    description: string;
    params?: z.ZodType;
    querystring?: z.ZodType;
    body?: z.ZodType;
    /** The success answer (./answers.ts), written by the exact-JSON serializer. */
    response?: { 200: z.ZodType; 503?: z.ZodType };
  };
  config: { reference: Reference; creates?: TransactionKind };
}

/** A card or crypto payment link's reference: the same answer. */
const linkAnswer = {
  body: 'either',
  answer: { description: 'The link.' },
  refusals: ['ORDER_CONFLICT'],
} satisfies Reference;

const endpoint = <const E extends Endpoint>(declared: E): E => declared;

/** A sandbox table as Markdown, for an operation's description. */
const markdownTable = (rows: [string, string][]) =>
  [
    '| Card | Outcome |',
    '| --- | --- |',
    ...rows.map(([cards, outcome]) => `| ${cards} | ${outcome} |`),
  ].join('\n');

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

export const health = endpoint({
  method: 'GET',
  url: '/healthz',
  schema: {
    operationId: 'health',
    tags: ['Operations'],
    summary: 'Liveness',
    description: 'The process is up.',
    response: { 200: Health },
  },
  config: { reference: { answer: { description: 'Up.' }, open: true } },
});

export const readiness = endpoint({
  method: 'GET',
  url: '/readyz',
  schema: {
    operationId: 'readiness',
    tags: ['Operations'],
    summary: 'Readiness',
    description:
      'Postgres and Temporal are reachable; `503` naming what is not, or while shutting down. `chains` lists the chain nodes deposits are watched on and whether a worker watches each now.',
    response: { 200: Readiness, 503: Readiness },
  },
  config: { reference: { answer: { description: 'Ready.' }, open: true } },
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

export const listPaymentTemplates = endpoint({
  method: 'GET',
  url: '/api/v1/payment-templates',
  schema: {
    operationId: 'listPaymentTemplates',
    tags: ['Payment links'],
    summary: "The key's mode's payment page templates",
    description: 'Templates are added with `npx payments templates add`.',
    response: { 200: TemplateList },
  },
  config: {
    reference: { answer: { description: 'The templates, oldest first.' } },
  },
});

export const createPaymentLink = endpoint({
  method: 'POST',
  url: '/api/v1/payment-link',
  schema: {
    operationId: 'createPaymentLink',
    tags: ['Payment links'],
    summary: 'Card payment link',
    description:
      'A link to a page that collects the customer (and the amount, when not fixed) and continues as a ' +
      'hosted card payment. One payment per link, until `expiry_date`. Plain JSON or the envelope.',
    body: LinkRequest,
    response: { 200: PaymentLink },
  },
  config: { reference: linkAnswer },
});

export const createCryptoPaymentLink = endpoint({
  method: 'POST',
  url: '/api/v1/crypto/payment-link',
  schema: {
    operationId: 'createCryptoPaymentLink',
    tags: ['Payment links'],
    summary: 'Crypto payment link (ONRAMP, OFFRAMP, PAYIN)',
    description:
      'A link to a page that collects the customer and creates the ramp or payin the link fixes. Plain ' +
      'JSON or the envelope.',
    body: CryptoLinkRequest,
    response: { 200: PaymentLink },
  },
  config: { reference: linkAnswer },
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

export const listWebhookEvents = endpoint({
  method: 'GET',
  url: '/api/v1/:mode/webhooks/events',
  schema: {
    operationId: 'listWebhookEvents',
    tags: ['Webhook events'],
    summary: 'Webhook events with every delivery attempt',
    description: "The key's merchant's events of the mode, newest first, paged as the lists are.",
    params: ModeParams,
    querystring: EventLogRequest,
    response: { 200: WebhookEventPage },
  },
  config: { reference: { answer: { description: 'A page of events.' } } },
});

export const redeliverWebhookEvent = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/webhooks/events/:event_id/redeliver',
  schema: {
    operationId: 'redeliverWebhookEvent',
    tags: ['Webhook events'],
    summary: 'Send a webhook event again now',
    description:
      'A new delivery run of the same `event_id` and body, with its own retries. Asked again before its ' +
      'first attempt, it starts nothing more.',
    params: EventParams,
    response: { 200: WebhookEventAnswer },
  },
  config: {
    reference: {
      answer: { description: 'The event.' },
      customMessages: { ROUTE_NOT_FOUND: 'Webhook event not found.' },
    },
  },
});

export const metrics = endpoint({
  method: 'GET',
  url: '/metrics',
  schema: {
    operationId: 'metrics',
    tags: ['Operations'],
    summary: 'Prometheus metrics',
    description: "This process's metrics in the Prometheus text format (docs/operations.md).",
  },
  config: { reference: { answer: { description: 'The metrics.' }, open: true } },
});
