import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { SEND_DEADLINE_MS, failureTypes } from '../src/contracts';
import { NotProcessedError, OutcomeUnknownError } from './connectors/errors';

/**
 * Runs a connector call and turns its faults into the closed failure types the workflows read. A
 * connector's own error text may echo request data, so it is not passed on.
 *
 * A refusal (`NotProcessedError`) is definite only on the call's first attempt: it is then final, and the
 * workflow may cascade or release at once. On a retry it only says this attempt was refused; an earlier
 * attempt whose answer was lost may have gone through, so it counts as an unknown outcome, which the
 * workflow resolves by asking the connector. A lookup (`asking`) is retried whatever it meets. A call that
 * may have been made before under another attempt count (`sentBefore`: a local activity run again by a
 * workflow task that was lost) has no definite refusal either. `firstCall` says the caller knows no earlier
 * attempt reached this call (this attempt took the step every such call follows: a payout's reserve), so
 * its refusal is definite on any attempt.
 */
export async function callConnector<T>(
  connector: string,
  call: () => Promise<T>,
  options: { asking?: boolean; sentBefore?: boolean; firstCall?: boolean } = {},
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (
      error instanceof NotProcessedError &&
      !options.asking &&
      !options.sentBefore &&
      (options.firstCall || Context.current().info.attempt === 1)
    )
      throw ApplicationFailure.nonRetryable(
        `connector ${connector}: not processed`,
        failureTypes.notProcessed,
      );
    if (error instanceof NotProcessedError || error instanceof OutcomeUnknownError)
      throw ApplicationFailure.retryable(
        `connector ${connector}: outcome unknown`,
        failureTypes.outcomeUnknown,
      );
    if (error instanceof ApplicationFailure) throw error;
    throw new Error(`connector ${connector} failed`);
  }
}

/** A terminal names a connector this worker does not have: nothing was sent anywhere. */
export function unknownConnector(kind: string, name: string): never {
  throw ApplicationFailure.nonRetryable(`Unknown ${kind} connector ${name}.`, failureTypes.notProcessed);
}

/**
 * A business answer (a decline, no funds, an inactive wallet): an outcome the workflow tells the merchant,
 * not a fault, so the worker logs it at debug rather than as a failed activity (BENIGN).
 */
export function businessOutcome(message: string, type: string): ApplicationFailure {
  return ApplicationFailure.create({
    message,
    type,
    nonRetryable: true,
    category: ApplicationFailureCategory.BENIGN,
  });
}

/**
 * The bound a send keeps: called at each point after which it may go no further once `withinMs` have
 * passed since `origin` (the start of its workflow task, for a send inside one; else of its attempt).
 * Late, it fails having sent nothing. `inTheTask`: no retry of the attempt can be on time (its task's
 * start stays the same), so it is not retried and the workflow decides; otherwise a fresh attempt is.
 */
export function lateAttempt(origin: number, what: string, inTheTask: boolean): (withinMs: number) => void {
  return (withinMs) => {
    if (Date.now() - origin <= withinMs) return;
    const message = `${what} was not sent: its attempt ran late.`;
    throw inTheTask
      ? ApplicationFailure.nonRetryable(message, failureTypes.lateAttempt)
      : ApplicationFailure.retryable(message, failureTypes.lateAttempt);
  };
}

/**
 * The deadline and abort signal of a request that moves money: `SEND_DEADLINE_MS` after `from` (the start
 * of the attempt, or of the workflow task a local activity runs in), or less when the activity has less
 * time; never later than that long from now (a `from` ahead of this worker's clock); aborted at the
 * deadline or when the activity is cancelled.
 */
export function sendWindow(from: number): { deadline: Date; signal: AbortSignal } {
  const context = Context.current();
  const ms = Math.min(SEND_DEADLINE_MS, Math.floor((context.info.startToCloseTimeoutMs * 2) / 3));
  const deadline = Math.min(from, Date.now()) + ms;
  return {
    deadline: new Date(deadline),
    signal: AbortSignal.any([
      context.cancellationSignal,
      AbortSignal.timeout(Math.max(0, deadline - Date.now())),
    ]),
  };
}
