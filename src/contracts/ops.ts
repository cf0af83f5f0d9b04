import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { FirstAnswer } from './updates';

/** What a transaction's workflow waits on now. */
export type WaitingFor =
  /** the customer, on a hosted page, until a deadline */
  | 'customer'
  /** crypto deposits, until a deadline */
  | 'deposits'
  /** a backoff before trying a connector again: `retryNow` cuts it short */
  | 'retry'
  /** a connector's answer to a call whose outcome is unknown */
  | 'connector'
  /** a step in progress (an activity) */
  | 'step'
  | 'nothing';

/** The workflow's own account of where it stands, for ops (`npx payments ops`, the Temporal UI). */
export interface TransactionState extends FirstAnswer {
  waitingFor: WaitingFor;
  /** One line: what it waits on, since or until when, what was received so far. */
  detail: string;
  /** ISO time the wait ends, when it has a deadline. */
  until?: string;
  /** A pending ops stop (force-fail, cancellation) and its reason. */
  stopRequested?: string;
}

export const stateQuery = defineQuery<TransactionState>('state');

/**
 * An ops action's input, as the CLI sends it or as typed in the Temporal UI's update dialog, for example
 * `{"reason": "Processor outage, refund manually", "actor": "alice"}`.
 */
/** An ops request to fail the transaction at its next wait or step boundary. */
export interface StopRequest {
  reason: string;
  actor: string;
  action: 'forceFail' | 'cancel';
  /** Makes the audit row of this request unique. */
  key: string;
}

export interface OpsAction {
  /** Who acts; the CLI sends the operating-system user, the UI `temporal-ui` unless given. */
  actor?: string;
  reason?: string;
}

/** Actor of actions taken in the Temporal UI without one (its update dialog, "Request Cancellation"). */
export const UI_ACTOR = 'temporal-ui';

/** Who an action is recorded as. */
export const actorOf = (action: OpsAction | undefined): string => action?.actor?.trim() || UI_ACTOR;

/** Cuts the current backoff short: the connector is asked again now. */
export const retryNowUpdate = defineUpdate<TransactionState, [OpsAction]>('retryNow');

/** Fails the transaction with the same compensations as a normal failure, and sends its webhook. */
export const forceFailUpdate = defineUpdate<FirstAnswer, [OpsAction]>('forceFail');

/** Starts a new delivery run of every webhook event of the transaction. */
export const redeliverWebhooksUpdate = defineUpdate<{ event_id: string; run: number }[], [OpsAction]>(
  'redeliverWebhooks',
);

/** Cuts a webhook delivery's wait before its next attempt short. */
export const webhookRetryNowUpdate = defineUpdate<string, [OpsAction]>('retryNow');

/** Why an ops action is refused on a transaction that is final. */
export const alreadyFinal = (status: string) => `Transaction is already final (${status}).`;
