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
 * What the workflow waits on, kept for the state query and shown in the Temporal UI as the workflow's
 * current details; and the backoffs that `retryNow` cuts short.
 */
export class Waiting {
  /** `stopped` says a stop was requested: a backoff ends early for it too. */
  constructor(private readonly stopped: () => boolean) {}

  private what: WaitingFor = 'nothing';
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
    this.deadline = deadline;
    this.line =
      deadline !== undefined && !detail.includes(' until ') ? `${detail} until ${clock(deadline)}` : detail;
    setCurrentDetails(this.line);
  }

  /** Waits `ms` before trying a connector again; ops can cut the wait short (`retryNow`), a stop ends it. */
  async backoff(ms: number, detail: string): Promise<void> {
    const deadline = Date.now() + ms;
    this.on('retry', `${detail}; next try at ${clock(deadline)}`);
    this.retry = false;
    await condition(() => this.retry || this.stopped(), ms, { summary: detail });
    this.retry = false;
  }

  /** Cuts the current backoff short; false when the workflow is not in one. */
  cutBackoff(): boolean {
    if (this.what !== 'retry') return false;
    this.retry = true;
    return true;
  }
}
