import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Db } from '../../src/db/client';
import type { Logger } from '../../src/platform/log';
import { startMaintenance, type MaintenanceJob } from '../../src/process/maintenance';

const MINUTE = 60_000;

/** Jobs that each take `takesMs` and note when they start and end, and how many run at once. */
function timedJobs(names: string[], takesMs: number, failing: string[] = []) {
  const events: string[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const jobs: MaintenanceJob[] = names.map((name) => [
    name,
    async () => {
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      events.push(`${name} started at ${Date.now() / 1000}`);
      await new Promise((resolve) => setTimeout(resolve, takesMs));
      running--;
      events.push(`${name} ended at ${Date.now() / 1000}`);
      if (failing.includes(name)) throw new Error(`${name} broke`);
    },
  ]);
  return { jobs, events, mostAtOnce: () => mostAtOnce };
}

describe('the maintenance jobs', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('run one after another, a round never over one still running, a failed job logged and the next run', async () => {
    vi.useFakeTimers({ now: 0 });
    const log = { warn: vi.fn() };
    // Each job takes 90 s: the three of a round outlast the next two ticks of the minute.
    const { jobs, events, mostAtOnce } = timedJobs(['sweep', 'buckets', 'keys'], 90_000, ['sweep']);
    const stop = startMaintenance({} as Db, log as unknown as Logger, MINUTE, jobs);

    await vi.advanceTimersByTimeAsync(5 * MINUTE + 30_000);
    expect(mostAtOnce()).toBe(1);
    expect(events).toEqual([
      'sweep started at 60',
      'sweep ended at 150',
      'buckets started at 150',
      'buckets ended at 240',
      'keys started at 240',
      'keys ended at 330',
    ]);
    expect(log.warn).toHaveBeenCalledTimes(1);
    expect(log.warn.mock.calls[0]![1]).toBe('sweep failed');

    // The tick after the round's end starts the next one; stopping waits for its job under way, not the rest.
    await vi.advanceTimersByTimeAsync(30_000);
    expect(events.at(-1)).toBe('sweep started at 360');
    let stopped = false;
    const stopping = stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(89_000);
    expect(stopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    await stopping;
    expect(events.at(-1)).toBe('sweep ended at 450');
    // Nothing more after the stop.
    await vi.advanceTimersByTimeAsync(10 * MINUTE);
    expect(events.at(-1)).toBe('sweep ended at 450');
    expect(log.warn).toHaveBeenCalledTimes(2);
  });

  it('log a job that throws before its promise and run the next; a stop between rounds returns at once', async () => {
    vi.useFakeTimers({ now: 0 });
    const log = { warn: vi.fn() };
    const ran: string[] = [];
    const stop = startMaintenance({} as Db, log as unknown as Logger, MINUTE, [
      [
        'sweep',
        () => {
          ran.push('sweep');
          throw new Error('sweep broke at once');
        },
      ],
      [
        'keys',
        async () => {
          ran.push('keys');
        },
      ],
    ]);
    await vi.advanceTimersByTimeAsync(MINUTE);
    expect(ran).toEqual(['sweep', 'keys']);
    expect(log.warn.mock.calls.map((call) => call[1])).toEqual(['sweep failed']);
    let stopped = false;
    void stop().then(() => {
      stopped = true;
    });
    // Microtasks only: no timer needs to run for a stop with no job under way.
    await Promise.resolve();
    await Promise.resolve();
    expect(stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(5 * MINUTE);
    expect(ran).toEqual(['sweep', 'keys']);
  });
});
