import { desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { chainSends } from '../db/schema/index';

/**
 * The node refused the transfer outright (too little balance or gas money, a fee it will not take): it
 * was never signed, or never entered the node's pool, so it moved nothing. A later attempt may work.
 */
export class TransferRejectedError extends Error {}

/** A database handle or an open transaction on it. */
type Queryable = Pick<Db, 'select' | 'execute'>;

/** The latest attempt stored under a send's idempotency key, if any (`chain_sends`). */
export async function lastAttempt(
  db: Queryable,
  idempotencyKey: string,
): Promise<typeof chainSends.$inferSelect | undefined> {
  const [last] = await db
    .select()
    .from(chainSends)
    .where(eq(chainSends.idempotencyKey, idempotencyKey))
    .orderBy(desc(chainSends.attempt))
    .limit(1);
  return last;
}

/**
 * The next sequence number of sends from `fromAddress` on a node (refused ones included), for a sender
 * with no nonce of its chain's own (Bitcoin, Solana): call it under that address's lock.
 */
export async function nextSendNumber(db: Queryable, nodeId: string, fromAddress: string): Promise<number> {
  const [{ next }] = (
    await db.execute<{ next: number }>(sql`
      select coalesce(max(${chainSends.nonce}), -1)::int + 1 as next from ${chainSends}
      where ${chainSends.chainNodeId} = ${nodeId} and ${chainSends.fromAddress} = ${fromAddress}`)
  ).rows as [{ next: number }];
  return next;
}
