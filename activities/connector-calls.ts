import { ApplicationFailure } from '@temporalio/common';
import { failureTypes } from '../src/temporal/contracts';
import { NotProcessedError, OutcomeUnknownError } from './connectors/errors';

/**
 * Runs a connector call and turns its faults into the closed failure types the workflows read. Both stay
 * retryable: the activity's retries repeat the call with the same idempotency key. A connector's own error
 * text may echo request data, so it is not passed on.
 */
export async function callConnector<T>(connector: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof NotProcessedError)
      throw ApplicationFailure.retryable(`connector ${connector}: not processed`, failureTypes.notProcessed);
    if (error instanceof OutcomeUnknownError)
      throw ApplicationFailure.retryable(`connector ${connector}: answer lost`, failureTypes.outcomeUnknown);
    if (error instanceof ApplicationFailure) throw error;
    throw new Error(`connector ${connector} failed`);
  }
}

/** A terminal names a connector this worker does not have: nothing was sent anywhere. */
export function unknownConnector(kind: string, name: string): never {
  throw ApplicationFailure.nonRetryable(`Unknown ${kind} connector ${name}.`, failureTypes.notProcessed);
}
