import { lt, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { cardVault } from '../db/schema/index';
import { pruneBuckets } from '../api/rate-limit';
import type { Logger } from '../platform/log';

/**
 * Removes card data whose hold has expired: CVVs past their short hold, and vault rows (tombstones
 * included) past theirs. The deletes are idempotent, so several processes at once do no harm.
 */
export async function sweepCardVault(db: Db): Promise<{ cvvs: number; cards: number }> {
  const cvvs = await db
    .update(cardVault)
    .set({ cvvEnc: null, cvvExpiresAt: null })
    .where(lt(cardVault.cvvExpiresAt, sql`now()`))
    .returning({ id: cardVault.transactionId });
  const cards = await db
    .delete(cardVault)
    .where(lt(cardVault.expiresAt, sql`now()`))
    .returning({ id: cardVault.transactionId });
  return { cvvs: cvvs.length, cards: cards.length };
}

/**
 * The periodic jobs every process runs: the card vault sweep and the pruning of idle rate-limit buckets.
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
  ];
  const timer = setInterval(() => {
    for (const [name, run] of jobs)
      run().catch((error: unknown) => log.warn({ err: error }, `${name} failed`));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
