import { CancellationScope } from '@temporalio/workflow';
import { CANCELLED_BY_OPS, UI_ACTOR, type FirstAnswer, type StopRequest } from '../src/contracts';

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
  machine: { requestStop(request: StopRequest): void; finish(): Promise<FirstAnswer> },
  body: () => Promise<void>,
): Promise<FirstAnswer> {
  CancellationScope.current().cancelRequested.catch(() =>
    machine.requestStop({ reason: CANCELLED_BY_OPS, actor: UI_ACTOR, action: 'cancel', key: 'cancel' }),
  );
  return CancellationScope.nonCancellable(async () => {
    await body();
    return machine.finish();
  });
}
