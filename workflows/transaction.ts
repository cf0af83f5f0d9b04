import { CancellationScope } from '@temporalio/workflow';
import { CANCELLED_BY_OPS, UI_ACTOR, type FirstAnswer, type StopRequest } from '../src/contracts';
import { finalAlready } from './failures';

/**
 * An update handler that a workflow cancellation does not break off: cancellation is a stop request the
 * workflow handles (see `runTransaction`), and the caller still gets its answer.
 */
export function shielded<Args extends unknown[], Result>(
  handler: (...args: Args) => Promise<Result>,
): (...args: Args) => Promise<Result> {
  return (...args) => CancellationScope.nonCancellable(() => handler(...args));
}

/**
 * Runs a transaction workflow's body. Workflow cancellation (the Temporal UI's "Request Cancellation")
 * does not tear the body down mid-step: it becomes a stop request the body honours at its next wait or
 * step boundary, failing the transaction with every compensation, as a failure would.
 */
export async function runTransaction(
  machine: {
    requestStop(request: StopRequest): void;
    finish(): Promise<FirstAnswer>;
    adopt(state: FirstAnswer): void;
    proofs: { bound(): Promise<void> };
  },
  body: () => Promise<void>,
): Promise<FirstAnswer> {
  CancellationScope.current().cancelRequested.catch(() =>
    machine.requestStop({ reason: CANCELLED_BY_OPS, actor: UI_ACTOR, action: 'cancel', key: 'cancel' }),
  );
  return CancellationScope.nonCancellable(async () => {
    // A run the service did not start fails here, before any step.
    await machine.proofs.bound();
    try {
      await body();
    } catch (error) {
      // The run a Reset replaced made the transaction final already: this run ends as it stands.
      const final = finalAlready(error);
      if (!final) throw error;
      machine.adopt(final);
    }
    return machine.finish();
  });
}
