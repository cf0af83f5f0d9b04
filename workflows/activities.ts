import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index';

/**
 * Postgres projection and lookups: quick, so they run as local activities (no round trip through the
 * Temporal server per step), retried until Postgres is back.
 */
export const store = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** Connector calls: a few quick retries, then the workflow cascades to the next terminal. */
export const connector = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumAttempts: 3 },
});

/**
 * Asking a connector about a call whose answer was lost: retried until the connector answers, since the
 * transaction cannot move on without knowing.
 */
export const lookup = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** One webhook attempt each; the delivery workflow owns the retry schedule. */
export const webhook = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 5 },
});

/** Wallet ledger steps: idempotent per (wallet, transaction, step), retried until Postgres answers. */
export const ledger = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    nonRetryableErrorTypes: ['InsufficientFunds'],
  },
});

/** Chain and fiat-rail calls: retried, each keyed by the transaction so a retry never sends twice. */
export const chain = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
