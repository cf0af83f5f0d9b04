import { sleep } from '@temporalio/workflow';
import type { Lookup } from '../src/contracts';
import type { TransactionStateMachine } from './state';

/** How long to wait before asking again while a connector still reports a call as in progress. */
function backoffMs(round: number): number {
  return Math.min(10_000 * 2 ** round, 15 * 60_000);
}

/**
 * Asks a connector what became of a call whose answer was lost, until it gives a definite answer. The
 * transaction shows PENDING ("being confirmed with the processor") meanwhile; a connector that reports the
 * call still in progress is asked again on a growing backoff.
 */
export async function askUntilKnown<Result>(
  machine: TransactionStateMachine,
  ask: () => Promise<Lookup<Result>>,
): Promise<Exclude<Lookup<Result>, { outcome: 'pending' }>> {
  await machine.outcomeUnknown();
  for (let round = 0; ; round++) {
    const answer = await ask();
    if (!isPending(answer)) return answer as Exclude<Lookup<Result>, { outcome: 'pending' }>;
    await sleep(backoffMs(round));
  }
}

function isPending(answer: unknown): boolean {
  return (answer as { outcome?: string }).outcome === 'pending';
}
