import { sleep } from '@temporalio/workflow';
import type { Lookup } from '../src/contracts';
import { attempt } from './failures';
import type { TransactionStateMachine } from './state';

/** How long to wait before asking again while a connector still reports a call as in progress. */
export function backoffMs(round: number): number {
  return Math.min(10_000 * 2 ** round, 15 * 60_000);
}

/**
 * Asks a connector what became of a call whose answer was lost, until it gives a definite answer. The
 * transaction shows PENDING ("being confirmed with the processor") meanwhile, and ops see it waiting on
 * the connector; while the connector reports the call in progress, or does not answer, it is asked again
 * on a growing backoff that ops can cut short (`retryNow`).
 */
export async function askUntilKnown<Result>(
  machine: TransactionStateMachine,
  connectorName: string,
  ask: () => Promise<Lookup<Result>>,
  options: { notFoundTrustedFrom?: number } = {},
): Promise<Exclude<Lookup<Result>, { outcome: 'pending' }>> {
  await machine.outcomeUnknown();
  machine.unknownOutcome = true;
  for (let round = 1; ; round++) {
    machine.waiting.on('connector', `Outcome unknown: asking ${connectorName} (round ${round})`);
    const answer = await attempt(ask);
    const early = options.notFoundTrustedFrom !== undefined && Date.now() < options.notFoundTrustedFrom;
    if (answer.kind === 'done' && isNotFound(answer.value) && early) {
      // The lost request may still be on its way: it is asked about again once it can no longer land.
      // Not a backoff ops can cut: nothing may be sent elsewhere before then.
      const waitMs = options.notFoundTrustedFrom! - Date.now();
      machine.waiting.on(
        'connector',
        `Outcome unknown: the request may still land; asking ${connectorName} again`,
      );
      await sleep(waitMs, { summary: `Until the lost request to ${connectorName} can no longer land` });
      continue;
    }
    if (answer.kind === 'done' && !isPending(answer.value)) {
      machine.unknownOutcome = false;
      return answer.value as Exclude<Lookup<Result>, { outcome: 'pending' }>;
    }
    const why = answer.kind === 'done' ? 'still in progress' : `${connectorName} did not answer`;
    await machine.waiting.backoff(backoffMs(round - 1), `Outcome unknown (${why}, round ${round})`);
  }
}

function isPending(answer: unknown): boolean {
  return (answer as { outcome?: string }).outcome === 'pending';
}

function isNotFound(answer: unknown): boolean {
  return (answer as { outcome?: string }).outcome === 'not_found';
}

/**
 * Asks a connector where a call stands: once, quietly, and when that gives no definite answer, until it
 * does (`askUntilKnown`, which shows the transaction as being confirmed meanwhile). A `not_found` before
 * `notFoundTrustedFrom` is no definite answer.
 */
export async function ask<Result>(
  machine: TransactionStateMachine,
  connectorName: string,
  question: () => Promise<Lookup<Result>>,
  options: { notFoundTrustedFrom?: number } = {},
): Promise<Exclude<Lookup<Result>, { outcome: 'pending' }>> {
  const first = await attempt(question);
  const early = options.notFoundTrustedFrom !== undefined && Date.now() < options.notFoundTrustedFrom;
  if (first.kind === 'done' && !isPending(first.value) && !(early && isNotFound(first.value)))
    return first.value as Exclude<Lookup<Result>, { outcome: 'pending' }>;
  return askUntilKnown(machine, connectorName, question, options);
}
