import { ActivityFailure, ApplicationFailure, TemporalFailure } from '@temporalio/workflow';
import { failureTypes, type FirstAnswer } from '../src/contracts';

export type Outcome<T> =
  | { kind: 'done'; value: T }
  | { kind: 'failed'; message: string; type: string }
  | { kind: 'notProcessed' }
  | { kind: 'late' }
  | { kind: 'unknown' };

/** The failure types that are business outcomes (the contract's messages), not faults. */
const BUSINESS: readonly string[] = [
  failureTypes.declined,
  failureTypes.insufficientFunds,
  failureTypes.walletInactive,
];

/**
 * Runs an activity and sorts how it ended, once its retries are spent: its value; a business outcome (a
 * decline, no funds) with the merchant-facing message; `notProcessed` when the connector certainly did not
 * act; `late` when a send inside the workflow task ran past its bound and sent nothing (a caller that
 * does not try it again treats it as `unknown`); or `unknown` for anything else (a lost answer, a timeout, a fault): the call may have taken effect
 * and must be asked about, never guessed. A remote activity's failure arrives wrapped in an
 * ActivityFailure, a local activity's as the failure itself; both are read the same way. An error that is
 * no Temporal failure is a bug in the workflow and fails its task.
 */
export async function attempt<T>(run: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { kind: 'done', value: await run() };
  } catch (error) {
    if (!(error instanceof TemporalFailure) || finalAlready(error)) throw error;
    const cause = error instanceof ActivityFailure ? error.cause : error;
    if (cause instanceof ApplicationFailure && cause.type) {
      if (BUSINESS.includes(cause.type)) return { kind: 'failed', message: cause.message, type: cause.type };
      if (cause.type === failureTypes.notProcessed) return { kind: 'notProcessed' };
      if (cause.type === failureTypes.lateAttempt) return { kind: 'late' };
    }
    return { kind: 'unknown' };
  }
}

/**
 * An update's validator refuses it with this message: shown as written to whoever sent it (the Temporal UI's
 * dialog among them), since the failure converter encodes only messages it did not write for people.
 */
export function refusal(message: string): ApplicationFailure {
  return ApplicationFailure.create({ message, type: failureTypes.refused, nonRetryable: true });
}

/**
 * The final state a step found the transaction in, when it refused because another run of the transaction
 * (the one a Reset replaced) had made it final: the run ends with that state (`runTransaction`).
 */
export function finalAlready(error: unknown): FirstAnswer | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (!(cause instanceof ApplicationFailure) || cause.type !== failureTypes.alreadyFinal) return undefined;
  return cause.details?.[0] as FirstAnswer | undefined;
}
