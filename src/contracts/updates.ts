import { defineUpdate } from '@temporalio/workflow';
import type { ApmMethod, TransactionStatus } from '../lib/vocabulary';
import type { UpdateProof } from '../lib/update-proof';
import type { CardSummary } from './inputs';

export type { UpdateProof } from '../lib/update-proof';

/**
 * The updates only the service may send: each records what a customer, the chain or a merchant did, so
 * each carries a proof from the part of the service that saw it (src/lib/update-proof.ts) as its second
 * argument. The same update sent by name without one, as the Temporal UI can, is refused with
 * `NOT_AN_OPS_ACTION` and changes nothing (docs/operations.md, which updates ops may send).
 */
export const INTERNAL_UPDATES = [
  'hostedDecision',
  'cardEntered',
  'apmMethod',
  'deposit',
  'linkUsed',
  'refund',
  'chargeback',
  'closeWindow',
  'expireWait',
  'expireLink',
] as const;
export type InternalUpdate = (typeof INTERNAL_UPDATES)[number];

export const NOT_AN_OPS_ACTION = 'Not an ops action.';

/** An internal update: its argument, and the service's proof (added by the service's client). */
type Proven<Arg> = [Arg, UpdateProof?];

/** Where a transaction stands, as its workflow says it. */
export interface FirstAnswer {
  status: TransactionStatus;
  message: string;
}

/**
 * Asked by the create call (update-with-start); completes once the workflow's first answer is projected,
 * so the call answers with the row the workflow wrote.
 */
export const firstAnswerUpdate = defineUpdate<FirstAnswer>('firstAnswer');

/** The customer's answer on a hosted page (3DS challenge, payout verification, ramp payment). */
export type HostedDecision = 'approve' | 'decline';
export const hostedDecisionUpdate = defineUpdate<FirstAnswer, Proven<HostedDecision>>('hostedDecision');

/**
 * The card the customer typed on the hosted payment page, as the workflow may see it: the number and CVV
 * went from the form to the encrypted vault. Answers the transaction's next state (a 3DS challenge or
 * final) once it is projected.
 */
export interface CardEntered {
  card: CardSummary;
}
export const cardEnteredUpdate = defineUpdate<FirstAnswer, Proven<CardEntered>>('cardEntered');

/** The method the customer picked on the APM page; answers the provider page to send them to. */
export const apmMethodUpdate = defineUpdate<FirstAnswer, Proven<{ method: ApmMethod }>>('apmMethod');

/**
 * A customer paid through a payment link: the transaction it created. Refused once the link was used by
 * another transaction or has expired; the same transaction again is answered as before.
 */
export const linkUsedUpdate = defineUpdate<'used', Proven<{ transactionId: string }>>('linkUsed');

/**
 * Test mode: expires an unused payment link now, as if its `expiry_date` had come (docs/sandbox.md).
 * Answers once the link is projected as expired, or `used` when a customer's use came first.
 */
export const expireLinkUpdate = defineUpdate<'expired' | 'used', Proven<Record<string, never>>>('expireLink');

/** A deposit seen on chain for the transaction's address. */
export interface Deposit {
  txHash: string;
  /** Base units of the asset. */
  units: string;
  /** The sending address, where a refund goes. */
  sender?: string;
  /**
   * Who saw it: the chain watcher on a node, or the sandbox chain (test mode only, checked by the
   * workflow too). Absent in deposits made before it was said.
   */
  source?: 'chain' | 'sandbox';
  /**
   * `accounted`: answer once the deposit is accounted, not once the payment it completes has settled
   * (which may wait on a fiat payout). Absent: the settled answer, as before.
   */
  answer?: 'accounted';
}

export type DepositDisposition = 'counted' | 'refunded' | 'held' | 'duplicate';

/** How the workflow accounted a deposit, and the transaction's state after it. */
export interface DepositReceipt extends FirstAnswer {
  disposition: DepositDisposition;
}
export const depositUpdate = defineUpdate<DepositReceipt, Proven<Deposit>>('deposit');

/**
 * Test mode: closes a transaction's deposit window now, as if its time had run out (a merchant rehearsing
 * an underpayment's end, docs/sandbox.md). Answers once the window has closed.
 */
export const closeWindowUpdate = defineUpdate<'closed', Proven<Record<string, never>>>('closeWindow');

/**
 * Test mode: ends what the transaction waits on from its customer now, as if its time had run out (a 3-D
 * Secure challenge or a hosted page nobody answers, a payout's verification page; docs/sandbox.md).
 */
export const expireWaitUpdate = defineUpdate<'expired', Proven<Record<string, never>>>('expireWait');

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

export const refundUpdate = defineUpdate<AftercareOutcome, Proven<AftercareRequest>>('refund');
export const chargebackUpdate = defineUpdate<AftercareOutcome, Proven<AftercareRequest>>('chargeback');
