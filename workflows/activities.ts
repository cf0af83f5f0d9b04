import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index';
import { clocked } from './task-clock';

/**
 * Postgres projection, lookups and the card purge: quick, so they run as local activities (no round trip
 * through the Temporal server per step), retried until Postgres is back. Only reads, writes that a later
 * write supersedes (projection versions follow the workflow's history) and what is kept per transaction
 * (its deposit address) belong here; see `ledger`.
 */
export const store = clocked(
  proxyLocalActivities<Activities>({
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  }),
);

/** Connector calls: a few quick retries, then the workflow cascades to the next terminal. */
export const connector = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumAttempts: 3 },
});

/**
 * The same connector calls as `connector`, run as local activities: inside the workflow task, so a create
 * or a 3-D Secure answer leaves with the task that learnt its outcome instead of waiting on an activity task
 * and a second workflow task. Only calls the connector deduplicates by idempotency key belong here: a task
 * that is lost (a worker crash) runs the call again with the same key, and the connector gives the first
 * call's result. What a lost task may have done where its retry takes another path (a stop request
 * arrived meanwhile) is asked for (`workflows/card-payment.ts`). A payout's send, which reserves and
 * settles in the wallet too, runs here behind its fence (`workflows/payout-send.ts`).
 */
export const quickConnector = clocked(
  proxyLocalActivities<Activities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumAttempts: 3 },
  }),
);

/**
 * Asking a connector about a call whose answer was lost: a few quick retries; the workflow asks again on
 * its own backoff (which ops can cut short) until the connector answers.
 */
export const lookup = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

/**
 * One webhook attempt each; the delivery workflow owns the retry schedule. What the merchant's endpoint
 * does (an error status, a timeout, a refused connection) comes back as the attempt's outcome, never as a
 * failure: a failure is ours (Postgres away), so it is retried until it passes, never given up on. The
 * fault suite found the earlier five attempts spent in a 20-second Postgres outage.
 */
export const webhook = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * The first attempts of a batch of redeliveries in one step: up to 100 merchant calls of at most 10 s,
 * eight at a time per endpoint, so the step may run minutes; it heartbeats after each call, and a worker
 * lost mid-batch is noticed within 30 s. Retried like `webhook`.
 */
export const webhookBatch = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * Wallet ledger steps: idempotent per (wallet, transaction, step), retried until Postgres answers. Remote,
 * never local: a local activity runs inside the workflow task, and a task the server refuses to complete
 * (an update or signal arrived meanwhile) is run again with more events, possibly down another path. A
 * remote activity is scheduled only by a task that completed, so money moves only on decisions that stand.
 * The one exception is a payout's send, whose reserve and settle are fenced by the card vault's record of
 * what was sent (`workflows/payout-send.ts`).
 */
export const ledger = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * Records of decisions (how a deposit was accounted, which webhook event a status made): remote for the
 * same reason as the ledger, retried until Postgres answers.
 */
export const records = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** Chain and fiat-rail calls: retried, each keyed by the transaction so a retry never sends twice. */
export const chain = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * Reconciliation's steps (docs/reconciliation.md): reading a source runs for as long as its window takes (a
 * day of transactions in pages); each step is retried until Postgres, Temporal or the source answers. A step
 * heartbeats while it runs, so one whose worker died is retried on another within 30 s, not after its
 * 30 minutes (until then the schedule skips every run, as one is still under way).
 */
export const reconciliation = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});
