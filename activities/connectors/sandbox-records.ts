import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../src/db/client';
import { preparedOnce } from '../../src/db/prepared';
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
 * The books' three statements, prepared once per database handle: each sandbox authorization, payout and
 * refund runs one or two of them, in the hot path of every sandbox card, APM and payout create
 * (bench/README.md).
 */
function statements(db: Db) {
  const key = sql.placeholder('idempotencyKey');
  return {
    find: preparedOnce(db, 'sandbox_find', () =>
      db
        .select()
        .from(sandboxOperations)
        .where(eq(sandboxOperations.idempotencyKey, key))
        .prepare('sandbox_find'),
    ),
    insert: preparedOnce(db, 'sandbox_insert', () =>
      db
        .insert(sandboxOperations)
        .values({
          idempotencyKey: key,
          transactionId: sql.placeholder('transactionId'),
          connector: sql.placeholder('connector'),
          operation: sql.placeholder('operation'),
          state: sql.placeholder('state'),
          reference: sql.placeholder('reference'),
          message: sql.placeholder('message'),
          amountMinor: sql.placeholder('amountMinor'),
          currency: sql.placeholder('currency'),
        })
        .onConflictDoNothing()
        .returning()
        .prepare('sandbox_insert'),
    ),
    settle: preparedOnce(db, 'sandbox_settle', () =>
      db
        .update(sandboxOperations)
        .set({
          // As SQL: drizzle's types take no placeholder in an update's values (text needs no encoding).
          state: sql`${sql.placeholder('state')}`,
          message: sql`${sql.placeholder('message')}`,
          updatedAt: sql`now()`,
        })
        .where(
          and(
            eq(sandboxOperations.idempotencyKey, key),
            eq(sandboxOperations.state, sql.placeholder('from')),
          ),
        )
        .returning()
        .prepare('sandbox_settle'),
    ),
  };
}

/**
 * The sandbox connectors' own books, keyed by the idempotency key of the request that made each entry.
 * Like a real processor's: a repeated request finds its first answer, a lost answer can be looked up.
 */
export function sandboxRecords(db: Db, connector: string, operation: 'authorization' | 'payout' | 'refund') {
  const books = statements(db);
  const find = async (idempotencyKey: string): Promise<SandboxRecord | undefined> => {
    const [row] = await books.find.execute({ idempotencyKey });
    return row;
  };
  return {
    find,

    /**
     * Records the first answer for the key and answers it; a concurrent or repeated request gets the
     * recorded one (read only then: the first request's insert answers its own row).
     */
    async record(idempotencyKey: string, entry: SandboxRecord): Promise<SandboxRecord> {
      const [inserted] = await books.insert.execute({
        idempotencyKey,
        transactionId: idempotencyKey.split(':')[0],
        connector,
        operation,
        state: entry.state,
        reference: entry.reference,
        message: entry.message,
        amountMinor: entry.amountMinor ?? null,
        currency: entry.currency ?? null,
      });
      return inserted ?? (await find(idempotencyKey))!;
    },

    /** Moves an entry out of `from` (a challenge or a verification) once; later calls see the result. */
    async settle(idempotencyKey: string, from: string, entry: Omit<SandboxRecord, 'reference'>) {
      const [settled] = await books.settle.execute({
        idempotencyKey,
        from,
        state: entry.state,
        message: entry.message,
      });
      return settled ?? find(idempotencyKey);
    },
  };
}
