/**
 * What the API, the worker and the workflows agree on: workflow names and inputs, updates and queries,
 * search attributes. Side-effect free, so workflow code can import it.
 */
import { defineSearchAttributeKey } from '@temporalio/common';
import { defineQuery, defineUpdate } from '@temporalio/workflow';

import type { Mode, TransactionStatus } from '../lib/vocabulary';

export { isFinal, type Mode, type TransactionKind, type TransactionStatus } from '../lib/vocabulary';

/** Search attributes: identifiers and state only, never personal data. */
export const searchAttributes = {
  merchantId: defineSearchAttributeKey('MerchantId', 'KEYWORD'),
  mode: defineSearchAttributeKey('TransactionMode', 'KEYWORD'),
  kind: defineSearchAttributeKey('TransactionKind', 'KEYWORD'),
  status: defineSearchAttributeKey('TransactionStatus', 'KEYWORD'),
  orderId: defineSearchAttributeKey('OrderId', 'KEYWORD'),
};
export const allSearchAttributes = Object.values(searchAttributes);

/** The first thing a transaction's workflow has to say, returned to the create call. */
export interface FirstAnswer {
  status: TransactionStatus;
  message: string;
}

/** Asked by the create call (update-with-start); completes once the workflow's first answer is projected. */
export const firstAnswerUpdate = defineUpdate<FirstAnswer>('firstAnswer');

/** The customer's answer on a hosted page (3DS challenge, payout verification, ramp payment). */
export type HostedDecision = 'approve' | 'decline';
export const hostedDecisionUpdate = defineUpdate<FirstAnswer, [HostedDecision]>('hostedDecision');

export const stateQuery = defineQuery<FirstAnswer>('state');

export interface TransactionRef {
  transactionId: string;
  merchantId: string;
  mode: Mode;
}

/** Card data as the workflow may see it: the number and CVV stay in the encrypted vault. */
export interface CardSummary {
  bin: string;
  last4: string;
  fingerprint: string;
}

export interface CardPaymentInput extends TransactionRef {
  amountMinor: string;
  currency: string;
  /** Pins one terminal: no cascading. */
  terminalId?: string;
  card: CardSummary;
  challengeTimeoutSeconds: number;
  /** The checkout page the customer completes the 3DS challenge on. */
  hostedPageUrl: string;
}

export interface CardPayoutInput extends TransactionRef {
  walletId: string;
  amountMinor: string;
  currency: string;
  terminalId?: string;
  card: CardSummary;
  verificationTimeoutSeconds: number;
  /** The verification page the cardholder answers on, when the processor asks for one. */
  hostedPageUrl: string;
}

/** What a crypto transaction expects on chain, in the asset's smallest units, and its locked fiat value. */
export interface CryptoExpectation {
  cryptoCurrency: string;
  cryptoNetwork: string;
  decimals: number;
  /** Expected amount, base units. */
  expectedUnits: string;
  /**
   * The fiat amount the expected crypto is worth, minor units: with `expectedUnits` it is the rate locked
   * for the transaction, at which partial amounts and tolerances are converted.
   */
  fiatMinor: string;
  /** ISO 4217 exponent of the fiat currency. */
  fiatDecimals: number;
  depositWindowSeconds: number;
}

export interface CryptoRampInput extends TransactionRef {
  transactionType: 'ONRAMP' | 'OFFRAMP';
  crypto: CryptoExpectation;
  walletAddress: string;
  fiatCurrency: string;
  fiatAmount: string;
  /** ONRAMP: how long the customer has to pay the fiat. */
  paymentWindowSeconds: number;
  hostedPageUrl: string;
}

export interface CryptoPayinInput extends TransactionRef {
  /** `fiatMinor` is what a full payment credits to the wallet. */
  crypto: CryptoExpectation;
  walletId: string;
  hostedPageUrl: string;
}

/** A deposit seen on chain for the transaction's address. */
export interface Deposit {
  txHash: string;
  /** Base units of the asset. */
  units: string;
  /** The sending address, where a refund goes. */
  sender?: string;
}

export type DepositDisposition = 'counted' | 'refunded' | 'held' | 'duplicate';

/** How the workflow accounted a deposit, and the transaction's state after it. */
export interface DepositReceipt extends FirstAnswer {
  disposition: DepositDisposition;
}
export const depositUpdate = defineUpdate<DepositReceipt, [Deposit]>('deposit');

export interface WebhookDeliveryInput {
  eventId: string;
  /** 0 for the first delivery, then one per redelivery. */
  run: number;
  delaysSeconds: number[];
  windowSeconds: number;
}

/**
 * Closed list of failure types activities raise; workflows branch on them. Business outcomes (a decline, no
 * funds, an inactive wallet) are final answers. `notProcessed` says a connector certainly did not act, which
 * allows a cascade or a release; anything else from a connector call leaves its outcome unknown.
 */
export const failureTypes = {
  declined: 'CardDeclined',
  notFound: 'NotFound',
  insufficientFunds: 'InsufficientFunds',
  walletInactive: 'WalletInactive',
  notProcessed: 'ConnectorNotProcessed',
  outcomeUnknown: 'ConnectorOutcomeUnknown',
} as const;

/**
 * What a connector says about an earlier request when asked by its idempotency key: the request's result,
 * `not_found` (it never arrived: certainly not processed) or `pending` (still being processed).
 */
export type Lookup<Result> = Result | { outcome: 'not_found' } | { outcome: 'pending' };

/** The idempotency keys connector calls carry: one per transaction, step and terminal, never reused. */
export const connectorKeys = {
  authorization: (transactionId: string, terminalId: string) => `${transactionId}:authorize:${terminalId}`,
  payout: (transactionId: string, terminalId: string) => `${transactionId}:payout:${terminalId}`,
};

/** What the UI's "Request Cancellation" means for a transaction: a failure with every compensation. */
export const CANCELLED_BY_OPS = 'Cancelled by ops.';

export const workflowIds = {
  webhook: (eventId: string, run: number) => `webhook-${eventId}-${run}`,
};
