import { patched, sleep } from '@temporalio/workflow';
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
    const askedAt = Date.now();
    const answer = await attempt(ask);
    if (answer.kind === 'done' && isNotFound(answer.value) && tooEarly(options, askedAt)) {
      // The lost request may still be on its way: it is asked about again once it can no longer land.
      // Not a backoff ops can cut: nothing may be sent elsewhere before then.
      const waitMs = options.notFoundTrustedFrom! - Date.now();
      machine.waiting.on(
        'connector',
        `Outcome unknown: the request may still land; asking ${connectorName} again`,
      );
      if (waitMs > 0)
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

/**
 * A "not found" asked before it can no longer land: judged by when it was asked, not when the answer
 * came, since a lookup that took long may have read the acquirer's books before the lost request landed.
 */
const JUDGED_BY_ASK_TIME = 'not-found-judged-by-ask-time';

/** Whether a `not_found` asked at `askedAt` came too early to be trusted (`notFoundTrustedFrom`). */
function tooEarly(options: { notFoundTrustedFrom?: number }, askedAt: number): boolean {
  const from = options.notFoundTrustedFrom;
  if (from === undefined || askedAt >= from) return false;
  if (Date.now() < from) return true;
  // Asked before the point, answered after it. Histories from before judged by the answer's time; the
  // patch is asked only here, where the two judgments differ.
  return patched(JUDGED_BY_ASK_TIME);
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
  const askedAt = Date.now();
  const first = await attempt(question);
  if (
    first.kind === 'done' &&
    !isPending(first.value) &&
    !(isNotFound(first.value) && tooEarly(options, askedAt))
  )
    return first.value as Exclude<Lookup<Result>, { outcome: 'pending' }>;
  return askUntilKnown(machine, connectorName, question, options);
}
