import { defineUpdate } from '@temporalio/workflow';
import type { ApmMethod, TransactionStatus } from '../lib/vocabulary';
import type { CardSummary } from './inputs';

/** Where a transaction stands, as its workflow says it. */
export interface FirstAnswer {
  status: TransactionStatus;
  message: string;
}

/**
 * The workflow's first answer with what it projected by then (hosted page, routed terminal, quote,
 * deposit address): enough for the create call to answer without reading the projection back.
 */
export interface TransactionSnapshot extends FirstAnswer {
  redirectUrl?: string | null;
  descriptor?: string | null;
  terminalId?: string;
  details?: Record<string, unknown>;
}

/** Asked by the create call (update-with-start); completes once the workflow's first answer is projected. */
export const firstAnswerUpdate = defineUpdate<TransactionSnapshot>('firstAnswer');

/** The customer's answer on a hosted page (3DS challenge, payout verification, ramp payment). */
export type HostedDecision = 'approve' | 'decline';
export const hostedDecisionUpdate = defineUpdate<FirstAnswer, [HostedDecision]>('hostedDecision');

/**
 * The card the customer typed on the hosted payment page, as the workflow may see it: the number and CVV
 * went from the form to the encrypted vault. Answers the transaction's next state (a 3DS challenge or
 * final) once it is projected.
 */
export interface CardEntered {
  card: CardSummary;
}
export const cardEnteredUpdate = defineUpdate<TransactionSnapshot, [CardEntered]>('cardEntered');

/** The method the customer picked on the APM page; answers the provider page to send them to. */
export const apmMethodUpdate = defineUpdate<TransactionSnapshot, [{ method: ApmMethod }]>('apmMethod');

/**
 * A customer paid through a payment link: the transaction it created. Refused once the link was used by
 * another transaction or has expired; the same transaction again is answered as before.
 */
export const linkUsedUpdate = defineUpdate<'used', [{ transactionId: string }]>('linkUsed');

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

/** What happens to a settled transaction afterwards (docs/api.md, refunds and chargebacks). */
export type AftercareKind = 'refund' | 'chargeback';

/** A refund or chargeback asked of a transaction's aftercare workflow. */
export interface AftercareRequest {
  /** The merchant's reason for a refund; empty for a chargeback. */
  reason: string;
  /**
   * Who asked (`merchant:mer_…` through the API, the operator through the CLI), written to the audit
   * trail with the effect. Absent in requests made before the trail recorded them.
   */
  actor?: string;
}

/** Applied (and projected, with its webhook started), or refused with the merchant-facing message. */
export type AftercareOutcome = { applied: true } | { refused: string };

export const refundUpdate = defineUpdate<AftercareOutcome, [AftercareRequest]>('refund');
export const chargebackUpdate = defineUpdate<AftercareOutcome, [AftercareRequest]>('chargeback');
