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
  /** A validator's refusal of an update, in words for whoever sent it (the Temporal UI shows them). */
  refused: 'UpdateRefused',
} as const;

/**
 * What a connector says about an earlier request when asked by its idempotency key: the request's result,
 * `not_found` (it never arrived: certainly not processed) or `pending` (still being processed).
 */
export type Lookup<Result> = Result | { outcome: 'not_found' } | { outcome: 'pending' };

/** The idempotency keys connector calls carry: one per transaction, step and terminal, never reused. */
export const connectorKeys = {
  authorization: (transactionId: string, terminalId: string) => `${transactionId}:authorize:${terminalId}`,
  /** The terminal an authorization key was sent through. */
  terminalOfAuthorization: (authorizationKey: string) =>
    authorizationKey.slice(authorizationKey.lastIndexOf(':authorize:') + ':authorize:'.length),
  payout: (transactionId: string, terminalId: string) => `${transactionId}:payout:${terminalId}`,
  apm: (transactionId: string, terminalId: string) => `${transactionId}:apm:${terminalId}`,
  /** A payment is refunded at most once, whichever terminal took it. */
  refund: (transactionId: string) => `${transactionId}:refund`,
};

/** What the UI's "Request Cancellation" means for a transaction: a failure with every compensation. */
export const CANCELLED_BY_OPS = 'Cancelled by ops.';
