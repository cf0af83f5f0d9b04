import { and, asc, count, desc, eq, gte, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db } from '../db/client';
import { ledgerEntries, merchants, terminals, transactions, wallets } from '../db/schema/index';
import { cardBrand } from '../lib/cards';
import { TtlCache } from '../lib/ttl-cache';
import type { TransactionKind, TransactionStatus } from '../lib/vocabulary';
import { fieldError } from '../platform/errors';
import type { MerchantScope } from './deps';
import { decodeCursor, encodeCursor, pageOf, type Cursor, type CursorScope, type Page } from './paging';

/** A list request, validated (docs/api.md, lists). */
export interface ListQuery {
  transaction_start_date?: string | undefined;
  transaction_end_date?: string | undefined;
  nextCursor?: string | undefined;
  prevCursor?: string | undefined;
  status?: TransactionStatus | undefined;
  transaction_type?: TransactionKind | undefined;
  order_id?: string | undefined;
  limit: number;
}

/** Where the page starts, from the query's cursor; a cursor this merchant's list did not issue is a 422. */
export function position(
  masterKey: string,
  scope: CursorScope,
  query: Pick<ListQuery, 'nextCursor' | 'prevCursor'>,
) {
  const given = query.nextCursor ?? query.prevCursor;
  if (given === undefined) return { direction: 'next' as const, cursor: undefined };
  const field = query.nextCursor !== undefined ? 'nextCursor' : 'prevCursor';
  const cursor = decodeCursor(masterKey, scope, given);
  if (!cursor) fieldError(field, `The ${field} is not a cursor of this list.`);
  return { direction: query.nextCursor !== undefined ? ('next' as const) : ('prev' as const), cursor };
}

/** The period filter: whole UTC days, both ends included. */
export function period(
  column: AnyPgColumn,
  query: Pick<ListQuery, 'transaction_start_date' | 'transaction_end_date'>,
): SQL[] {
  const conditions: SQL[] = [];
  if (query.transaction_start_date)
    conditions.push(gte(column, sql`${query.transaction_start_date}::date::timestamp at time zone 'UTC'`));
  if (query.transaction_end_date)
    conditions.push(lt(column, sql`(${query.transaction_end_date}::date + 1)::timestamp at time zone 'UTC'`));
  return conditions;
}

/** A keyset bound on (created_at, id): strictly past the cursor in the page's direction. */
export function beyond(
  at: AnyPgColumn,
  id: AnyPgColumn,
  cursor: Cursor,
  direction: 'next' | 'prev',
  idType: 'text' | 'bigint',
) {
  const bound = sql`(${cursor.at}::timestamptz, ${cursor.id}::${sql.raw(idType)})`;
  return direction === 'next' ? sql`(${at}, ${id}) < ${bound}` : sql`(${at}, ${id}) > ${bound}`;
}

export function pageMeta(
  masterKey: string,
  scope: CursorScope,
  page: { rows: { cursor: Cursor }[]; hasNextPage: boolean; hasPreviousPage: boolean },
  totalCount: number,
): Page<unknown>['meta'] {
  const first = page.rows[0];
  const last = page.rows.at(-1);
  return {
    hasNextPage: page.hasNextPage,
    hasPreviousPage: page.hasPreviousPage,
    ...(page.hasNextPage && last ? { nextCursor: encodeCursor(masterKey, scope, last.cursor) } : {}),
    ...(page.hasPreviousPage && first ? { prevCursor: encodeCursor(masterKey, scope, first.cursor) } : {}),
    totalCount,
  };
}

const iso = (value: Date | null) => (value ? value.toISOString() : null);

/**
 * `totalCount` is counted once per merchant, mode, list and filters, then kept for `COUNT_TTL_MS` in the
 * process: counting a large table on every page would cost many times the page itself (measured in the
 * bench). A count may therefore lag new rows by that long; the pages themselves never do.
 */
export const COUNT_TTL_MS = 10_000;
const counts = new TtlCache<string, number>(COUNT_TTL_MS, 10_000);

export async function cachedCount(
  db: Db,
  scope: CursorScope,
  query: object,
  table: PgTable,
  filters: SQL[],
): Promise<number> {
  // The cursor and the page size do not change the count.
  const {
    nextCursor: _next,
    prevCursor: _prev,
    limit: _limit,
    ...filtersAsked
  } = query as Record<string, unknown>;
  const key = JSON.stringify([scope.list, scope.merchantId, scope.mode, filtersAsked]);
  const known = counts.get(key);
  if (known !== undefined) return known;
  const [counted] = await db
    .select({ n: count() })
    .from(table)
    .where(and(...filters));
  const n = counted?.n ?? 0;
  counts.set(key, n);
  return n;
}

/** Merchant names, for the lists' `user`: they change rarely, and a page need not read them each time. */
const names = new TtlCache<string, string>(60_000, 10_000);

async function merchantName(db: Db, merchantId: string): Promise<string> {
  const known = names.get(merchantId);
  if (known !== undefined) return known;
  const [owner] = await db
    .select({ name: merchants.name })
    .from(merchants)
    .where(eq(merchants.id, merchantId));
  const name = owner?.name ?? '';
  names.set(merchantId, name);
  return name;
}

/**
 * The merchant's transactions of the key's mode, newest first, by keyset: a page holds still while new
 * transactions arrive (they come before the first page), and every cursor is bound to this merchant and
 * mode. Card numbers appear masked (BIN, six stars, last four), as stored.
 */
export async function listTransactions(
  db: Db,
  masterKey: string,
  merchant: MerchantScope,
  query: ListQuery,
): Promise<Page<Record<string, unknown>>> {
  const scope = { list: 'transactions', ...merchant };
  const { direction, cursor } = position(masterKey, scope, query);
  const t = transactions;
  const filters = [
    eq(t.merchantId, merchant.merchantId),
    eq(t.mode, merchant.mode),
    ...period(t.createdAt, query),
    ...(query.status ? [eq(t.status, query.status)] : []),
    ...(query.transaction_type ? [eq(t.kind, query.transaction_type)] : []),
    ...(query.order_id ? [eq(t.orderId, query.order_id)] : []),
  ];
  const order = direction === 'next' ? [desc(t.createdAt), desc(t.id)] : [asc(t.createdAt), asc(t.id)];
  const [rows, total, name] = await Promise.all([
    db
      .select({ row: listed, connector: terminals.connector, at: sql<string>`${t.createdAt}::text` })
      .from(t)
      .leftJoin(terminals, eq(terminals.id, t.terminalId))
      .where(and(...filters, ...(cursor ? [beyond(t.createdAt, t.id, cursor, direction, 'text')] : [])))
      .orderBy(...order)
      .limit(query.limit + 1),
    cachedCount(db, scope, query, t, filters),
    merchantName(db, merchant.merchantId),
  ]);
  const page = pageOf(
    rows.map((r) => ({ ...r, cursor: { at: r.at, id: r.row.id } })),
    { limit: query.limit, direction, fromCursor: cursor !== undefined },
  );
  const user = { name, user_kyc: { name } };
  return {
    message: 'Transactions retrieved successfully.',
    data: page.rows.map(({ row, connector }) => {
      const amount = row.amountMinor !== null ? row.amountMinor.toString() : trimDecimal(row.amountDecimal);
      return {
        first_name: row.customer.first_name,
        last_name: row.customer.last_name,
        converted_amount: amount,
        converted_currency: row.currency,
        transaction_id: row.id,
        amount,
        currency: row.currency,
        status: row.status,
        card_type: row.cardBin ? cardBrand(row.cardBin) : null,
        card_number: row.cardBin && row.cardLast4 ? `${row.cardBin}******${row.cardLast4}` : null,
        transaction_type: row.kind,
        order_id: row.orderId,
        country: row.country,
        email: row.customer.email,
        created_at: row.createdAt.toISOString(),
        transaction_date: row.updatedAt.toISOString(),
        chargeback_date: iso(row.chargebackAt),
        refund_date: iso(row.refundedAt),
        suspicious_date: null,
        merchant_connector: { name: connector ?? null },
        user,
      };
    }),
    meta: pageMeta(masterKey, scope, page, total),
  };
}

/** The columns a list item shows: the row without its details, hashes and URLs. */
const listed = {
  id: transactions.id,
  kind: transactions.kind,
  orderId: transactions.orderId,
  status: transactions.status,
  amountMinor: transactions.amountMinor,
  amountDecimal: transactions.amountDecimal,
  currency: transactions.currency,
  customer: transactions.customer,
  country: transactions.country,
  cardBin: transactions.cardBin,
  cardLast4: transactions.cardLast4,
  createdAt: transactions.createdAt,
  updatedAt: transactions.updatedAt,
  refundedAt: transactions.refundedAt,
  chargebackAt: transactions.chargebackAt,
};

/** An exact decimal without the column's trailing zeros (`25.000000000000000000` is `25`). */
function trimDecimal(value: string | null): string | null {
  if (value === null) return null;
  return value.includes('.') ? value.replace(/\.?0+$/, '') : value;
}

/**
 * The ledger entries of the merchant's wallets of the key's mode, newest first, paged as the transactions
 * are: each entry's transaction (or operator reference), wallet, step and signed amount in minor units.
 */
export async function listWalletTransactions(
  db: Db,
  masterKey: string,
  merchant: MerchantScope,
  query: ListQuery,
): Promise<Page<Record<string, unknown>>> {
  const scope = { list: 'wallet-transactions', ...merchant };
  const { direction, cursor } = position(masterKey, scope, query);
  const e = ledgerEntries;
  const mine = db
    .select({ id: wallets.id })
    .from(wallets)
    .where(and(eq(wallets.merchantId, merchant.merchantId), eq(wallets.mode, merchant.mode)));
  const filters = [
    inArray(e.walletId, mine),
    ...period(e.createdAt, query),
    ...(query.order_id ? [eq(e.reference, query.order_id)] : []),
  ];
  const order = direction === 'next' ? [desc(e.createdAt), desc(e.id)] : [asc(e.createdAt), asc(e.id)];
  const [rows, total] = await Promise.all([
    db
      .select({ entry: e, currency: wallets.currency, at: sql<string>`${e.createdAt}::text` })
      .from(e)
      .innerJoin(wallets, eq(wallets.id, e.walletId))
      .where(and(...filters, ...(cursor ? [beyond(e.createdAt, e.id, cursor, direction, 'bigint')] : [])))
      .orderBy(...order)
      .limit(query.limit + 1),
    cachedCount(db, scope, query, e, filters),
  ]);
  const page = pageOf(
    rows.map((r) => ({ ...r, cursor: { at: r.at, id: String(r.entry.id) } })),
    { limit: query.limit, direction, fromCursor: cursor !== undefined },
  );
  return {
    message: 'Wallet transactions retrieved successfully.',
    data: page.rows.map(({ entry, currency }) => ({
      transaction_id: entry.reference,
      wallet_id: entry.walletId,
      amount: entry.amount.toString(),
      currency,
      transaction_type: entry.step,
      created_at: entry.createdAt.toISOString(),
      transaction_date: entry.createdAt.toISOString(),
    })),
    meta: pageMeta(masterKey, scope, page, total),
  };
}
