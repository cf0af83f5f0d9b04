import { condition, setCurrentDetails } from '@temporalio/workflow';
import type { WaitingFor } from '../src/contracts';

/**
 * `HH:MM UTC` of a moment, for one-line details; with the date (`2026-11-24 02:19 UTC`) when it is not
 * within the next twelve hours, so a deadline a day away does not read as one already past.
 */
export function clock(at: number, now = Date.now()): string {
  const iso = new Date(at).toISOString();
  const time = `${iso.slice(11, 16)} UTC`;
  return at - now > 12 * 3_600_000 || at < now ? `${iso.slice(0, 10)} ${time}` : time;
}

/**
 * `retryNow` (of a transaction or a webhook delivery) is on the audit trail before the retry it asks for
 * acts, so what the retry does may rely on it being recorded. Deprecated: histories from before it (which
 * cut the wait first) can no longer be open (docs/architecture.md, retiring a patch).
 */
export const RETRY_AUDITED_FIRST = 'retry-audited-before-it-acts';

/**
 * Which ops action, if any, moves a transaction on from each kind of wait: the second line of its current
 * details in the Temporal UI (the update dialog's names; `npx payments ops retry` and `ops fail` send the
 * same), so ops reading a stuck payment see what fixes it beside what it waits on.
 */
const OPS_HINTS: Record<WaitingFor, string> = {
  retry:
    "Ops: `retryNow` asks again now; `forceFail` with a reason fails it, compensations and webhook included (refused while a connector's answer to an earlier call is unknown).",
  connector:
    "Ops: nothing to do yet: the connector's answer is asked for on a growing backoff, and `forceFail` is refused until it is known.",
  customer: 'Ops: nothing to do: the customer has until the deadline; `forceFail` with a reason ends it now.',
  deposits: 'Ops: nothing to do until the window closes; `forceFail` with a reason fails it now.',
  step: 'Ops: a step is running; if it stays here, read the pending activity below and the worker logs.',
  nothing: 'Ops: nothing to do; `redeliverWebhooks` sends its webhooks again.',
};

/**
 * What the workflow waits on, kept for the state query and shown in the Temporal UI as the workflow's
 * current details with the ops action that moves it on; and the backoffs that `retryNow` cuts short.
 */
export class Waiting {
  /** `stopped` says a stop was requested: it ends a backoff that waits for nothing but another try. */
  constructor(private readonly stopped: () => boolean) {}

  private what: WaitingFor = 'nothing';
  /**
   * How many times the workflow came to rest: on anything but a step or a question to a connector (both
   * under way). A retry's attempt ends so: paid, failed, in another backoff, or waiting on someone.
   */
  private rests = 0;
  private line = 'Starting.';
  private deadline: number | undefined;
  private retry = false;

  get state(): { waitingFor: WaitingFor; detail: string; until?: string } {
    return {
      waitingFor: this.what,
      detail: this.line,
      ...(this.deadline !== undefined ? { until: new Date(this.deadline).toISOString() } : {}),
    };
  }

  /** Says what the workflow waits on now (the UI shows it); a deadline, when there is one. */
  on(what: WaitingFor, detail: string, deadline?: number): void {
    this.what = what;
    if (what !== 'step' && what !== 'connector') this.rests += 1;
    this.deadline = deadline;
    this.line =
      deadline !== undefined && !detail.includes(' until ') ? `${detail} until ${clock(deadline)}` : detail;
    setCurrentDetails(`${this.line}\n\n${OPS_HINTS[what]}`);
  }

  /**
   * Waits `ms` before trying a connector again; ops can cut the wait short (`retryNow`). A stop request
   * ends it only when nothing was sent that the connector may have acted on (`stoppable`): a backoff before
   * asking about a call whose outcome is unknown runs its course, or a stop would turn it into a tight loop
   * of questions while the money stays where it is.
   */
  async backoff(ms: number, detail: string, options: { stoppable?: boolean } = {}): Promise<void> {
    const deadline = Date.now() + ms;
    this.on('retry', `${detail}; next try at ${clock(deadline)}`);
    this.retry = false;
    const stoppable = options.stoppable === true;
    await condition(() => this.retry || (stoppable && this.stopped()), ms, { summary: detail });
    this.retry = false;
  }

  /** A mark that `restedSince` compares with. */
  get restMark(): number {
    return this.rests;
  }

  /** Whether the workflow came to rest again (a new wait or backoff, its end) since `mark`. */
  restedSince(mark: number): boolean {
    return this.rests > mark;
  }

  /** Cuts the current backoff short; false when the workflow is not in one. */
  cutBackoff(): boolean {
    if (this.what !== 'retry') return false;
    this.retry = true;
    return true;
  }
}
