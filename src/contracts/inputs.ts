import type { Mode } from '../lib/vocabulary';

/**
 * The service's update key (hex Ed25519 public key, src/ciphers/update-proof.ts), which the workflow checks
 * every internal update's proof against. Absent in workflows started before proofs, which take internal
 * updates without one until they close.
 */
export interface UpdateKeyed {
  updateKey?: string;
}

export interface TransactionRef extends UpdateKeyed {
  transactionId: string;
  merchantId: string;
  mode: Mode;
  /** False when the transaction has no webhook URL: its moves send no event. Earlier inputs left it out. */
  notifies?: boolean;
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
  /** The card sent with the request; absent when the customer types it on our payment page. */
  card?: CardSummary;
  /**
   * A hosted card payment (docs/hosted.md): the workflow first sends the customer to this page and waits,
   * as long as a 3DS challenge, for the card typed there (`cardEnteredUpdate`).
   */
  cardEntryPageUrl?: string;
  challengeTimeoutSeconds: number;
  /** The checkout page the customer completes the 3DS challenge on. */
  hostedPageUrl: string;
}

/** A payment by an alternative method the customer picks on our page (docs/hosted.md). */
export interface ApmPaymentInput extends TransactionRef {
  amountMinor: string;
  currency: string;
  /** Pins one terminal: its connector's methods only. */
  terminalId?: string;
  /** Our page listing the methods. */
  methodPageUrl: string;
  /** Our page standing in for the provider's, for providers without their own (the sandboxes). */
  providerPageUrl: string;
  /** How long the customer has for each page. */
  timeoutSeconds: number;
}

export interface CardPayoutInput extends TransactionRef {
  walletId: string;
  amountMinor: string;
  /** The merchant's fee on the payout, reserved and taken with it; absent (none) in older histories. */
  feeMinor?: string;
  currency: string;
  terminalId?: string;
  card: CardSummary;
  verificationTimeoutSeconds: number;
  /** The verification page the cardholder answers on, when the processor asks for one. */
  hostedPageUrl: string;
  /** How long to keep trying while every terminal refuses the payout (nothing sent); one hour if absent. */
  sendWindowSeconds?: number;
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

export interface WebhookDeliveryInput {
  eventId: string;
  /** 0 for the first delivery, then one per redelivery. */
  run: number;
  delaysSeconds: number[];
  windowSeconds: number;
  /** Attempts the transaction's workflow already made (1: the first); none when left out. */
  attemptsMade?: number;
  /** When the first attempt was made (epoch ms): the window counts from it. The run's start otherwise. */
  firstAttemptAt?: number;
  /** What went wrong with the last attempt made, for the run's details. */
  lastError?: string;
}

/** Redelivery runs of many events, their first attempts made together. */
export interface WebhookRedeliveryInput {
  runs: WebhookDeliveryInput[];
}

/** A settled transaction's aftercare (refunds, chargebacks): which transaction. */
export interface AftercareInput extends UpdateKeyed {
  transactionId: string;
  /** Names the record the API made for this run before it started it; absent in runs from before. */
  ticket?: string;
}

/** A payment link's workflow: open until a customer pays through it once, or until it expires. */
export interface PaymentLinkInput extends UpdateKeyed {
  linkId: string;
  /** ISO 8601. */
  expiresAt: string;
}

/**
 * A reconciliation run (docs/reconciliation.md): by the schedule, or asked for by ops. It reads and
 * records breaks; it never moves money, so whoever starts one decides nothing.
 */
export interface ReconciliationInput {
  /** `schedule`, or the actor who asked for the run. */
  trigger: string;
  /** The sources to read; every one when absent. */
  sources?: string[];
  /** ISO 8601: the window a run asked for by hand reads (a scheduled run continues from the last). */
  since?: string;
  until?: string;
}

/** What a reconciliation run read and found, by source. */
export interface ReconciliationSummary {
  window: { from: string; to: string };
  sources: Record<string, { found: number; opened: number; resolved: number }>;
}
