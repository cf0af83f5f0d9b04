/**
 * The connector contract: what every card acquirer, card payout processor and chain connector implements
 * (docs/connectors.md). A connector answers business outcomes as values (approved, declined, paid,
 * verification) and signals what it could not do by throwing: `NotProcessedError` when it certainly did
 * not act on the request, `OutcomeUnknownError` when it may have (errors.ts). Every money-moving call
 * carries an idempotency key (src/contracts `connectorKeys`): a repeated key must get the first answer,
 * never a second charge or payout, and `lookup` must find the request by it after an answer was lost.
 */
import type { Mode } from '../../src/lib/vocabulary';
import type { ChainSend } from '../../src/chain/family';
import type { Lookup } from './errors';

/** The connector interface every card acquirer implements. */
export interface CardAcquirer {
  /** Authorizes a payment; a repeated idempotency key gets the first answer, never a second charge. */
  authorize(request: AuthorizeRequest): Promise<AuthorizeResult>;
  /** Completes an authorization's 3-D Secure challenge with the cardholder's answer. */
  completeChallenge(request: {
    authorizationKey: string;
    reference: string;
    decision: 'approve' | 'decline';
    terminal: TerminalAccess;
  }): Promise<AuthorizeResult>;
  /**
   * Where an authorization stands: by the provider's reference when the payment has one (a challenge), else
   * by the idempotency key it was sent with (a lost answer).
   */
  lookup(request: {
    authorizationKey: string;
    reference?: string;
    terminal: TerminalAccess;
  }): Promise<Lookup<AuthorizeResult>>;
  /**
   * Closes an authorization whose 3-D Secure challenge the cardholder left unfinished, so it can no longer
   * complete: answers `declined` once closed, or `approved` when the cardholder finished first.
   */
  cancel(request: {
    authorizationKey: string;
    reference: string;
    terminal: TerminalAccess;
  }): Promise<AuthorizeResult>;
  /**
   * Refunds an approved authorization in full. A repeated refund key gets the first answer, never a second
   * refund; `refused` is the acquirer's definite no (nothing was refunded).
   */
  refund(request: {
    authorizationKey: string;
    /** The acquirer's reference for the payment, when the projection has it. */
    reference?: string;
    refundKey: string;
    terminal: TerminalAccess;
  }): Promise<RefundResult>;
}

export type RefundResult =
  { outcome: 'refunded'; reference: string } | { outcome: 'refused'; message: string };

/** The terminal a call goes through, with its credentials (decrypted just for the call; none for sandboxes). */
export interface TerminalAccess {
  terminalId: string;
  credentials: Record<string, string> | undefined;
}

export interface AuthorizeRequest {
  idempotencyKey: string;
  transactionId: string;
  mode: Mode;
  pan: string;
  cvv: string;
  expiry: string;
  amountMinor: bigint;
  currency: string;
  /** 0 for the merchant's first terminal by priority. */
  terminalRank: number;
  terminal: TerminalAccess;
  /** Where the provider sends the cardholder back after its own 3-D Secure page. */
  returnUrl: string;
  /**
   * The acquirer must not process the request after this (as a payout's `deadline`): a request still on
   * its way then is refused, so the workflow, which trusts a `not_found` about it only later
   * (`SEND_LANDS_WITHIN_MS`), never sends the card to another terminal while this one may still charge it.
   */
  deadline: Date;
  /** Aborted at the deadline, or when the activity is cancelled: the request is given up. */
  signal: AbortSignal;
}

export type AuthorizeResult =
  | { outcome: 'approved'; reference: string }
  | {
      outcome: 'challenge';
      reference: string;
      /** The provider's own 3-D Secure page, when it has one; else the customer gets our hosted page. */
      redirectUrl?: string;
    }
  | { outcome: 'declined'; message: string };

/** The connector interface every card payout processor implements. */
export interface PayoutProcessor {
  /** Sends a payout; a repeated idempotency key gets the first answer, never a second payout. */
  send(request: PayoutRequest): Promise<PayoutResult>;
  /** Completes a payout held for cardholder verification. */
  confirm(request: {
    payoutKey: string;
    reference: string;
    decision: 'approve' | 'decline';
  }): Promise<PayoutResult>;
  /** Where a payout stands, by the idempotency key it was sent with (for a lost answer). */
  lookup(request: { payoutKey: string }): Promise<Lookup<PayoutResult>>;
}

export interface PayoutRequest {
  idempotencyKey: string;
  transactionId: string;
  mode: Mode;
  pan: string;
  expiry: string;
  amountMinor: bigint;
  currency: string;
  /**
   * The processor must not process the request after this: a send still on its way then is refused, so
   * the workflow, which asks about it only later (`SEND_LANDS_WITHIN_MS`), never routes the payout
   * elsewhere while it can still land.
   */
  deadline: Date;
  /** Aborted at the deadline, or when the activity is cancelled: the request is given up. */
  signal: AbortSignal;
}

export type PayoutResult =
  | { outcome: 'paid'; reference: string }
  | { outcome: 'verification'; reference: string }
  | { outcome: 'declined'; message: string };

/**
 * The chain-facing connector: deposit addresses, sends and refunds. `mode` picks the network's node for
 * that mode (a registered node of its family when there is one, the sandbox chain otherwise).
 */
export interface ChainConnector {
  /** The transaction's deposit address on `network`; the same one on every call, never another's. */
  depositAddress(request: {
    transactionId: string;
    network: string;
    mode: Mode;
    /** The asset the customer pays in; absent in histories from before it was passed. */
    currency?: string;
  }): Promise<string>;
  /**
   * Sends crypto; the same idempotency key always gives the same transaction hash, whatever retries.
   * `transactionId` sends from the node that watched the transaction's deposits, when it had any.
   */
  send(request: ChainSend): Promise<string>;
}

/** The fiat side of an off-ramp: pays the customer once the crypto has settled. */
export interface FiatPayouts {
  payout(request: { idempotencyKey: string; currency: string; amount: string }): Promise<string>;
}

/**
 * The connector interface every alternative-payment-method provider implements (a bank redirect, a
 * wallet): the payment starts at the provider, the customer approves or declines there, and the provider
 * gives the outcome. Both calls carry the payment's idempotency key: a repeat gets the first answer.
 */
export interface ApmProvider {
  /** Opens the payment at the provider; `redirectUrl` is its page, when it has one of its own. */
  start(request: {
    idempotencyKey: string;
    transactionId: string;
    mode: Mode;
    method: string;
    amountMinor: bigint;
    currency: string;
    terminal: TerminalAccess;
  }): Promise<{ reference: string; redirectUrl?: string }>;
  /** The customer's answer at the provider, and the payment's outcome. */
  complete(request: {
    idempotencyKey: string;
    reference: string;
    decision: 'approve' | 'decline';
    terminal: TerminalAccess;
  }): Promise<{ outcome: 'approved' } | { outcome: 'declined'; message: string }>;
  /** Where a payment stands, by its key: for a lost answer, and before a payment is given up. */
  lookup(request: { idempotencyKey: string; terminal: TerminalAccess }): Promise<Lookup<ApmStatus>>;
  /**
   * Closes a payment the customer left unfinished at the provider, so it can no longer be paid: answers
   * `declined` once closed, or `approved` when the customer paid first.
   */
  cancel(request: {
    idempotencyKey: string;
    reference: string;
    terminal: TerminalAccess;
  }): Promise<ApmStatus>;
}

/** Where a payment stands at its provider: waiting for the customer, or answered. */
export type ApmStatus =
  | { outcome: 'started'; reference: string }
  | { outcome: 'approved' }
  | { outcome: 'declined'; message: string };
