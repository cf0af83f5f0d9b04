import { lt, sql } from 'drizzle-orm';
import type { Db } from './db/client';
import { cardVault } from './db/schema/index';
import type { Logger } from './log';

/**
 * Removes card data whose hold has expired: CVVs past their short hold, and vault rows past theirs. Every
 * worker runs it; the deletes are idempotent, so several at once do no harm.
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

export function startMaintenance(db: Db, log: Logger, intervalMs = 60_000): () => void {
  const timer = setInterval(() => {
    sweepCardVault(db).then(
      (swept) => {
        if (swept.cvvs + swept.cards > 0) log.info(swept, 'expired card data removed');
      },
      (error: unknown) => log.warn({ err: error }, 'card vault sweep failed'),
    );
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
