import type { Db } from '../db/client';
import { sweepCardVault } from '../transactions/card-vault';
import { pruneBuckets } from '../api/rate-limit';
import { pruneIdempotencyKeys } from '../transactions/create';
import type { Logger } from '../platform/log';

/**
 * The periodic jobs every process runs: the card vault sweep, the pruning of idle rate-limit buckets and
 * of idempotency keys past their day.
 * Returns the function that stops them.
 */
export function startMaintenance(db: Db, log: Logger, intervalMs = 60_000): () => void {
  const jobs: [name: string, run: () => Promise<unknown>][] = [
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
  const timer = setInterval(() => {
    for (const [name, run] of jobs)
      run().catch((error: unknown) => log.warn({ err: error }, `${name} failed`));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
