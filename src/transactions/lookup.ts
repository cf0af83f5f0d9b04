import { and, eq, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { transactions } from '../db/schema/index';
import { isMode, type TransactionKind } from '../lib/vocabulary';
import type { TransactionRow } from './view';
import type { MerchantScope } from './deps';

export async function findTransaction(db: Db, id: string): Promise<TransactionRow | undefined> {
  const [row] = await db.select().from(transactions).where(eq(transactions.id, id));
  return row;
}

/** Looks `id` up as a transaction id, then as an order id, among one merchant's transactions of one mode. */
export async function lookupTransaction(
  db: Db,
  merchant: MerchantScope,
  id: string,
): Promise<TransactionRow | undefined> {
  // One round trip: a transaction id match sorts before an order id match.
  const [row] = await db
    .select()
    .from(transactions)
    .where(
      and(
        eq(transactions.merchantId, merchant.merchantId),
        eq(transactions.mode, merchant.mode),
        or(eq(transactions.id, id), eq(transactions.orderId, id)),
      ),
    )
    .orderBy(sql`${transactions.id} = ${id} desc`)
    .limit(1);
  return row;
}

/** The transaction a hosted page shows: found by id within the path's mode, and only of the page's kinds. */
export async function findHostedTransaction(
  db: Db,
  mode: string,
  kinds: readonly TransactionKind[],
  id: string,
): Promise<TransactionRow | undefined> {
  if (!isMode(mode)) return undefined;
  const [row] = await db
    .select()
    .from(transactions)
    .where(and(eq(transactions.id, id), eq(transactions.mode, mode)));
  return row && kinds.includes(row.kind) ? row : undefined;
}
