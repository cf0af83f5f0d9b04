import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../src/db/client';
import { sandboxOperations } from '../../src/db/schema/index';

export interface SandboxRecord {
  state: string;
  reference: string;
  message: string | null;
  /** What the request moved (minor units) and in which currency: the books reconciliation reads. */
  amountMinor?: bigint | null;
  currency?: string | null;
}

/**
 * The sandbox connectors' own books, keyed by the idempotency key of the request that made each entry.
 * Like a real processor's: a repeated request finds its first answer, a lost answer can be looked up.
 */
export function sandboxRecords(db: Db, connector: string, operation: 'authorization' | 'payout' | 'refund') {
  return {
    async find(idempotencyKey: string): Promise<SandboxRecord | undefined> {
      const [row] = await db
        .select()
        .from(sandboxOperations)
        .where(eq(sandboxOperations.idempotencyKey, idempotencyKey));
      return row;
    },

    /** Records the first answer for the key; a concurrent or repeated request gets the recorded one. */
    async record(idempotencyKey: string, entry: SandboxRecord): Promise<SandboxRecord> {
      await db
        .insert(sandboxOperations)
        .values({
          idempotencyKey,
          transactionId: idempotencyKey.split(':')[0],
          connector,
          operation,
          ...entry,
        })
        .onConflictDoNothing();
      return (await this.find(idempotencyKey))!;
    },

    /** Moves an entry out of `from` (a challenge or a verification) once; later calls see the result. */
    async settle(idempotencyKey: string, from: string, entry: Omit<SandboxRecord, 'reference'>) {
      await db
        .update(sandboxOperations)
        .set({ state: entry.state, message: entry.message, updatedAt: sql`now()` })
        .where(and(eq(sandboxOperations.idempotencyKey, idempotencyKey), eq(sandboxOperations.state, from)));
      return this.find(idempotencyKey);
    },
  };
}
