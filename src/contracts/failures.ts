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
  /**
   * A send inside a workflow task (a card authorization, a payout) ran past the bound its task's start set
   * for noting or sending, and did neither: nothing was sent by this attempt (activities/connector-calls.ts,
   * `lateAttempt`).
   */
  lateAttempt: 'LateAttempt',
  /** A validator's refusal of an update, in words for whoever sent it (the Temporal UI shows them). */
  refused: 'UpdateRefused',
  /**
   * A run the service did not start for its record (the Temporal UI's Start Workflow, a copied input): it
   * may not act, and fails at its first step (docs/operations.md, what binds a run).
   */
  notTheServiceRun: 'NotTheServiceRun',
  /**
   * A step refused because the transaction is final already (a Reset's run replaying what the first run
   * settled): the run ends with the final state the transaction has. Carries that state as its details.
   */
  alreadyFinal: 'TransactionAlreadyFinal',
} as const;

/** Why a run the service did not start is refused, before what it lacks. */
export const NOT_THE_SERVICE_RUN = 'This workflow run was not started by the service, so it may not act.';

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
  /** The terminal a payout key was sent through. */
  terminalOfPayout: (payoutKey: string) =>
    payoutKey.slice(payoutKey.lastIndexOf(':payout:') + ':payout:'.length),
  apm: (transactionId: string, terminalId: string) => `${transactionId}:apm:${terminalId}`,
  /** A payment is refunded at most once, whichever terminal took it. */
  refund: (transactionId: string) => `${transactionId}:refund`,
};

/** What the UI's "Request Cancellation" means for a transaction: a failure with every compensation. */
export const CANCELLED_BY_OPS = 'Cancelled by ops.';

/**
 * How long a connector request that moves money may be on its way: a payout send or a card authorization is
 * given up (its request aborted, and refused by the provider past its deadline) this long after its
 * attempt started (a send inside a workflow task: after the task started), well inside the activity's own
 * 30 s. After an attempt whose answer was lost, the workflow trusts a connector's `not_found` only once
 * this much more has passed (`SEND_LANDS_WITHIN_MS`), so nothing is sent elsewhere while the earlier
 * request can still land.
 */
export const SEND_DEADLINE_MS = 20_000;
/** `SEND_DEADLINE_MS` and a margin for the clocks of the worker and the connector. */
export const SEND_LANDS_WITHIN_MS = SEND_DEADLINE_MS + 5_000;
/** The workflow task timeout every transaction workflow is started with (the server's default, pinned). */
export const WORKFLOW_TASK_TIMEOUT_MS = 10_000;
/**
 * A payout send or a card authorization inside a workflow task notes its key this long after the task
 * started at the latest: half the task's timeout, the rest a margin for the clocks of the worker and the
 * server. A retry of a lost task starts only once the task timed out, so it finds every key the lost
 * attempt will ever note.
 */
export const SEND_NOTED_WITHIN_MS = WORKFLOW_TASK_TIMEOUT_MS / 2;
