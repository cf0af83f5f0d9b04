/**
 * What the API, the worker and the workflows agree on: workflow names and inputs, updates and queries,
 * search attributes. Side-effect free, so workflow code can import it.
 */
import { defineSearchAttributeKey } from '@temporalio/common';
import { defineQuery, defineUpdate } from '@temporalio/workflow';

export type Mode = 'test' | 'live';
export type TransactionKind = 'card' | 'payout' | 'ramp' | 'crypto_payin';
export type TransactionStatus = 'PENDING' | 'REDIRECT' | 'SUCCESS' | 'FAILED' | 'BLOCKED';
export const FINAL_STATUSES: readonly TransactionStatus[] = ['SUCCESS', 'FAILED', 'BLOCKED'];

export function isFinal(status: TransactionStatus): boolean {
  return FINAL_STATUSES.includes(status);
}

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

/** What a crypto transaction expects on chain, in the asset's smallest units. */
export interface CryptoExpectation {
  cryptoCurrency: string;
  cryptoNetwork: string;
  decimals: number;
  /** Expected amount, base units. */
  expectedUnits: string;
  depositWindowSeconds: number;
}

export interface CryptoRampInput extends TransactionRef {
  transactionType: 'ONRAMP' | 'OFFRAMP';
  crypto: CryptoExpectation;
  walletAddress: string;
  fiatCurrency: string;
  fiatAmount: string;
  /** ISO 4217 exponent of the fiat currency. */
  fiatDecimals: number;
  /** ONRAMP: how long the customer has to pay the fiat. */
  paymentWindowSeconds: number;
  hostedPageUrl: string;
}

export interface CryptoPayinInput extends TransactionRef {
  crypto: CryptoExpectation;
  walletId: string;
  /** Fiat credited to the wallet on success, minor units. */
  creditMinor: string;
  hostedPageUrl: string;
}

/** A deposit seen on chain for the transaction's address. */
export interface Deposit {
  txHash: string;
  /** Base units of the asset. */
  units: string;
}
export const depositUpdate = defineUpdate<FirstAnswer, [Deposit]>('deposit');

export interface WebhookDeliveryInput {
  eventId: string;
  /** 0 for the first delivery, then one per redelivery. */
  run: number;
  delaysSeconds: number[];
  windowSeconds: number;
}

/** Closed list of business outcomes raised as non-retryable ApplicationFailures; workflows branch on it. */
export const failureTypes = {
  declined: 'CardDeclined',
  technical: 'ConnectorTechnicalFailure',
  notFound: 'NotFound',
  insufficientFunds: 'InsufficientFunds',
} as const;

export const workflowIds = {
  webhook: (eventId: string, run: number) => `webhook-${eventId}-${run}`,
};
