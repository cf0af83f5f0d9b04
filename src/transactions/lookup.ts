import { and, eq, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { preparedOnce } from '../db/prepared';
import { transactions } from '../db/schema/index';
import { isMode, type TransactionKind } from '../lib/vocabulary';
import { BODY_COLUMNS, type BodyRow, type TransactionRow } from './view';
import type { MerchantScope } from './deps';

/** A transaction by id: after every create, hosted step and ops action, so a prepared statement. */
export async function findTransaction(db: Db, id: string): Promise<TransactionRow | undefined> {
  const find = preparedOnce(db, 'find_transaction', () =>
    db
      .select()
      .from(transactions)
      .where(eq(transactions.id, sql.placeholder('id')))
      .prepare('find_transaction'),
  );
  const [row] = await find.execute({ id });
  return row;
}

/**
 * What a lookup by `id` finds: within one merchant's transactions of one mode, `id` as a transaction id or
 * as an order id, in one round trip; a transaction id match sorts first.
 */
const foundBy = () =>
  and(
    eq(transactions.merchantId, sql.placeholder('merchantId')),
    eq(transactions.mode, sql.placeholder('mode')),
    or(eq(transactions.id, sql.placeholder('id')), eq(transactions.orderId, sql.placeholder('id'))),
  );
const transactionIdFirst = () => sql`${transactions.id} = ${sql.placeholder('id')} desc`;

/** The lookup of whole rows, as a prepared statement. */
function prepareLookup(db: Db) {
  return db
    .select()
    .from(transactions)
    .where(foundBy())
    .orderBy(transactionIdFirst())
    .limit(1)
    .prepare('lookup_transaction');
}

/** The status endpoints' read, the API's hottest: the lookup, answering only the body's columns. */
function prepareStatusLookup(db: Db) {
  const columns = Object.fromEntries(BODY_COLUMNS.map((name) => [name, transactions[name]])) as {
    [Name in (typeof BODY_COLUMNS)[number]]: (typeof transactions)[Name];
  };
  return db
    .select(columns)
    .from(transactions)
    .where(foundBy())
    .orderBy(transactionIdFirst())
    .limit(1)
    .prepare('lookup_status');
}

/**
 * As `lookupTransaction`, answering only what the transaction's body is made of: the status endpoints,
 * the API's hottest read, neither transfer nor parse the columns only the service reads (the workflow's
 * input, the run it is bound to, the card's fingerprint).
 */
export async function lookupStatus(
  db: Db,
  merchant: MerchantScope,
  id: string,
): Promise<BodyRow | undefined> {
  const lookup = preparedOnce(db, 'lookup_status', () => prepareStatusLookup(db));
  const [row] = await lookup.execute({ merchantId: merchant.merchantId, mode: merchant.mode, id });
  return row;
}

/** Looks `id` up as a transaction id, then as an order id, among one merchant's transactions of one mode. */
export async function lookupTransaction(
  db: Db,
  merchant: MerchantScope,
  id: string,
): Promise<TransactionRow | undefined> {
  const lookup = preparedOnce(db, 'lookup_transaction', () => prepareLookup(db));
  const [row] = await lookup.execute({ merchantId: merchant.merchantId, mode: merchant.mode, id });
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

/**
 * What ops name a transaction by: its id, or its order id as the status endpoint takes it. An order id is
 * unique within one merchant and mode only, so it may name transactions of several; `merchantId` picks
 * one. Answers the transaction id, the candidates when the name is ambiguous, or none.
 */
export async function resolveOpsName(
  db: Db,
  name: string,
  merchantId?: string,
): Promise<{ id: string } | { ambiguous: TransactionRow[] } | undefined> {
  if (await findTransaction(db, name)) return { id: name };
  const rows = await db
    .select()
    .from(transactions)
    .where(
      merchantId
        ? and(eq(transactions.orderId, name), eq(transactions.merchantId, merchantId))
        : eq(transactions.orderId, name),
    )
    .limit(10);
  if (rows.length === 0) return undefined;
  if (rows.length === 1) return { id: rows[0]!.id };
  return { ambiguous: rows.sort((a, b) => (a.id < b.id ? -1 : 1)) };
}
