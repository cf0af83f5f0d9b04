import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { failureTypes } from '../src/temporal/contracts';

export type Outcome<T> =
  { kind: 'done'; value: T } | { kind: 'failed'; message: string } | { kind: 'technical' };

/** The failure types that are business outcomes (CONTRACT.md messages), not faults. */
const BUSINESS: readonly string[] = [failureTypes.declined, failureTypes.insufficientFunds];

/**
 * Runs an activity and sorts how it ended: its value, a business outcome (a decline, no funds) with the
 * merchant-facing message, or a technical failure left after its retries. Anything else is a bug and
 * fails the workflow task. A remote activity's failure arrives wrapped in an ActivityFailure, a local
 * activity's as the ApplicationFailure itself; both are read the same way.
 */
export async function attempt<T>(run: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { kind: 'done', value: await run() };
  } catch (error) {
    const cause = error instanceof ActivityFailure ? error.cause : error;
    if (!(cause instanceof ApplicationFailure)) throw error;
    if (cause.type && BUSINESS.includes(cause.type)) return { kind: 'failed', message: cause.message };
    return { kind: 'technical' };
  }
}
