import type { Db } from '../db/client';
import { sweepCardVault } from '../transactions/card-vault';
import { pruneBuckets } from '../api/rate-limit';
import { pruneIdempotencyKeys } from '../transactions/create';
import type { Logger } from '../platform/log';

export type MaintenanceJob = [name: string, run: () => Promise<unknown>];

/**
 * The periodic jobs every process runs: the card vault sweep, the pruning of idle rate-limit buckets and
 * of idempotency keys past their day.
 */
export function maintenanceJobs(db: Db, log: Logger): MaintenanceJob[] {
  return [
    [
      'card vault sweep',
      async () => {
        const swept = await sweepCardVault(db);
        if (swept.cvvs + swept.cards > 0) log.info(swept, 'expired card data removed');
      },
    ],
    ['rate limit pruning', () => pruneBuckets(db)],
    ['idempotency key pruning', () => pruneIdempotencyKeys(db)],
  ];
}

/**
 * Runs the jobs every `intervalMs`, one after another: a round takes one database connection at a time (run
 * at once, each took one, which the pool opened and closed again 10 s later, in every process every minute),
 * and a round never starts while the last is still running (a slow database would pile them up). A job that
 * fails is logged and the next one runs. Returns the function that stops them: it waits for the job under way
 * (the rest of its round is left to the next start), so the database is closed after it.
 */
export function startMaintenance(
  db: Db,
  log: Logger,
  intervalMs = 60_000,
  jobs: MaintenanceJob[] = maintenanceJobs(db, log),
): () => Promise<void> {
  let round: Promise<void> | undefined;
  let stopped = false;
  const runRound = async () => {
    for (const [name, run] of jobs) {
      if (stopped) return;
      try {
        await run();
      } catch (error) {
        log.warn({ err: error }, `${name} failed`);
      }
    }
  };
  const timer = setInterval(() => {
    round ??= runRound().finally(() => {
      round = undefined;
    });
  }, intervalMs);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await round;
  };
}
