import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../src/db/client';
import { paymentLinks } from '../src/db/schema/index';

/** The link workflow's projection: used by a transaction, or expired unused. */
export function linkActivities(db: Db) {
  return {
    async markLinkUsed(input: { linkId: string; transactionId: string }): Promise<void> {
      await db
        .update(paymentLinks)
        .set({ status: 'used', transactionId: input.transactionId, updatedAt: sql`now()` })
        .where(eq(paymentLinks.id, input.linkId));
    },
    async markLinkExpired(input: { linkId: string }): Promise<void> {
      await db
        .update(paymentLinks)
        .set({ status: 'expired', updatedAt: sql`now()` })
        .where(and(eq(paymentLinks.id, input.linkId), eq(paymentLinks.status, 'open')));
    },
  };
}
