import { merchantName } from '../merchants/accounts';
import { and, asc, count, desc, eq, gte, inArray, lt, sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db } from '../db/client';
import { preparedWhileFewer } from '../db/prepared';
import {
  chainNodes,
  depositAddresses,
  ledgerEntries,
  terminals,
  transactions,
  wallets,
} from '../db/schema/index';
import { cardBrand } from '../lib/cards';
import { TtlCache } from '../lib/ttl-cache';
import type { LedgerStep, TransactionKind, TransactionStatus } from '../lib/vocabulary';
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

/** A wallet-transactions request: the step instead of a kind, one wallet or all, no status. */
export interface WalletListQuery extends Omit<ListQuery, 'status' | 'transaction_type'> {
  transaction_type?: LedgerStep | undefined;
  wallet_id?: string | undefined;
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

/** A list argument in a condition: a request's value, or its placeholder in a prepared statement. */
type Value = string | number | SQL | Placeholder;

/** The period filter: whole UTC days, both ends included. */
export function period(column: AnyPgColumn, start: Value | undefined, end: Value | undefined): SQL[] {
  const conditions: SQL[] = [];
  if (start !== undefined) conditions.push(gte(column, sql`${start}::date::timestamp at time zone 'UTC'`));
  if (end !== undefined) conditions.push(lt(column, sql`(${end}::date + 1)::timestamp at time zone 'UTC'`));
  return conditions;
}

/** A keyset bound on (created_at, id): strictly past the cursor in the page's direction. */
export function beyond(
  at: AnyPgColumn,
  id: AnyPgColumn,
  cursor: { at: Value; id: Value },
  direction: 'next' | 'prev',
  idType: 'text' | 'bigint',
) {
  const bound = sql`(${cursor.at}::timestamptz, ${cursor.id}::${sql.raw(idType)})`;
  return direction === 'next' ? sql`(${at}, ${id}) < ${bound}` : sql`(${at}, ${id}) > ${bound}`;
}

/** A list's arguments by name; a name left undefined is a filter the request did not ask for. */
type Args = Record<string, string | number | undefined>;

/** How a condition reads an argument: as its value (counting), or as a placeholder (the page). */
type Bind = (name: string) => SQL | undefined;

const values =
  (args: Args): Bind =>
  (name) =>
    args[name] === undefined ? undefined : sql`${args[name]}`;

const placeholders =
  (args: Args): Bind =>
  (name) =>
    args[name] === undefined ? undefined : sql`${sql.placeholder(name)}`;

/** The condition on an argument when the request gives it. */
const given = (value: SQL | undefined, condition: (value: SQL) => SQL): SQL[] =>
  value === undefined ? [] : [condition(value)];

/** A page's query: prepared under a name, or run once as it is; either way given the arguments. */
interface PageQuery<Rows> {
  execute(values: Args): Promise<Rows>;
  prepare(name: string): { execute(values: Args): Promise<Rows> };
}

/**
 * A LIMIT written into the SQL text. Drizzle types `limit` as a number or a placeholder and sends both as
 * a parameter; it writes any SQL chunk given as it is, which is what the page statements need.
 */
const literalLimit = (size: number) => sql.raw(String(Math.trunc(size))) as unknown as number;

/** At most this many page shapes are prepared per database handle (see `preparedWhileFewer`). */
const PREPARED_PAGES = 64;

/**
 * Fetches a page. Its statement is prepared once per shape: which arguments are given, which way it goes,
 * and the page size, written into the SQL. With the size a literal, Postgres settles on one generic plan
 * after a few pages instead of planning every page again (a LIMIT parameter makes the generic plan look
 * far costlier than it is); the planning was most of a page's time in the bench. Names stay well under
 * Postgres's 63 bytes.
 */
async function fetchPage<Rows>(
  db: Db,
  list: string,
  direction: 'next' | 'prev',
  args: Args,
  size: number,
  build: () => PageQuery<Rows>,
): Promise<Rows> {
  const shape = Object.keys(args)
    .sort()
    .map((name) => (args[name] === undefined ? 0 : 1))
    .join('');
  const name = `${list}_${direction}_${shape}_${size}`;
  const statement = preparedWhileFewer(db, name, PREPARED_PAGES, () => build().prepare(name));
  return statement ? statement.execute(args) : build().execute(args);
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

/**
 * A timestamp as `Date.prototype.toISOString` writes it (UTC, to the millisecond, `Z`), written by
 * Postgres: a page of transactions makes no Date for its rows' times only to write them out again (about a
 * twentieth of the API's CPU per page, bench/README.md). Both cut a time to the millisecond, never round it
 * up (`test/api/lists.test.ts` compares them); null stays null. With `fraction` `'US'` it writes all six
 * digits of the microseconds, as the column holds them: exact enough for a cursor.
 */
const isoText = <Text extends string | null = string>(column: AnyPgColumn, fraction: 'MS' | 'US' = 'MS') =>
  sql<Text>`to_char(${column} at time zone 'UTC', ${sql.raw(`'YYYY-MM-DD"T"HH24:MI:SS.${fraction}"Z"'`)})`;

/** An `isoText` time to the microsecond, cut to the millisecond as `toISOString` writes it. */
const toMilliseconds = (microseconds: string) => `${microseconds.slice(0, -4)}Z`;

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
  const args: Args = {
    merchantId: merchant.merchantId,
    mode: merchant.mode,
    start: query.transaction_start_date,
    end: query.transaction_end_date,
    status: query.status,
    kind: query.transaction_type,
    orderId: query.order_id,
    at: cursor?.at,
    id: cursor?.id,
  };
  const [rows, total, name] = await Promise.all([
    fetchPage(db, 'transactions', direction, args, query.limit + 1, () =>
      transactionPage(db, placeholders(args), direction, query.limit + 1),
    ),
    cachedCount(db, scope, query, transactions, transactionFilters(values(args))),
    merchantName(db, merchant.merchantId),
  ]);
  const page = pageOf(
    rows.map((row) => ({ row, cursor: { at: row.createdAt, id: row.id } })),
    { limit: query.limit, direction, fromCursor: cursor !== undefined },
  );
  const user = { name, user_kyc: { name } };
  return {
    message: 'Transactions retrieved successfully.',
    data: page.rows.map(({ row }) => {
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
        created_at: toMilliseconds(row.createdAt),
        transaction_date: row.updatedAt,
        chargeback_date: row.chargebackAt,
        refund_date: row.refundedAt,
        suspicious_date: null,
        merchant_connector: { name: row.connector },
        payment_link_id: row.paymentLinkId,
        user,
      };
    }),
    meta: pageMeta(masterKey, scope, page, total),
  };
}

/** Which of the merchant's transactions of the mode a list holds. */
function transactionFilters(v: Bind): SQL[] {
  const t = transactions;
  return [
    ...given(v('merchantId'), (id) => eq(t.merchantId, id)),
    ...given(v('mode'), (mode) => eq(t.mode, mode)),
    ...period(t.createdAt, v('start'), v('end')),
    ...given(v('status'), (status) => eq(t.status, status)),
    ...given(v('kind'), (kind) => eq(t.kind, kind)),
    ...given(v('orderId'), (orderId) => eq(t.orderId, orderId)),
  ];
}

/** A page of transactions, newest first going forward: one past the limit, to tell whether more follow. */
function transactionPage(db: Db, v: Bind, direction: 'next' | 'prev', size: number) {
  const t = transactions;
  const at = v('at');
  const id = v('id');
  const order = direction === 'next' ? [desc(t.createdAt), desc(t.id)] : [asc(t.createdAt), asc(t.id)];
  return db
    .select(listed)
    .from(t)
    .where(
      and(
        ...transactionFilters(v),
        ...(at && id ? [beyond(t.createdAt, t.id, { at, id }, direction, 'text')] : []),
      ),
    )
    .orderBy(...order)
    .limit(literalLimit(size));
}

/**
 * The connector that took the transaction: its terminal's for cards and payouts; for crypto, `evm-chain`
 * when a real node served it (a deposit address on one, or a node of its network and mode registered and
 * not retired when it was created) and `sandbox-crypto` otherwise (docs/connectors.md). Evaluated only for
 * the page's rows.
 */
function connectorOf(t: typeof transactions) {
  const d = depositAddresses;
  const n = chainNodes;
  const terminal = sql`(select ${terminals.connector} from ${terminals} where ${terminals.id} = ${t.terminalId})`;
  return sql<string | null>`coalesce(${terminal}, case when ${t.kind} in ('crypto_payin', 'ramp') then
    case when exists (select 1 from ${d} where ${d.transactionId} = ${t.id})
      or exists (select 1 from ${n} where ${n.mode} = ${t.mode} and ${n.network} = ${t.details} ->> 'crypto_network'
        and ${n.createdAt} <= ${t.createdAt} and (${n.retiredAt} is null or ${n.retiredAt} > ${t.createdAt}))
    then 'evm-chain' else 'sandbox-crypto' end end)`;
}

/**
 * The columns a list item shows: the row without its details, hashes and URLs, and the connector. One
 * level, no join: drizzle maps each row's columns by their path, and nesting or a join's nullable side
 * cost it more per column (bench/README.md).
 */
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
  /** To the microsecond: the page's cursor is made of it. */
  createdAt: isoText(transactions.createdAt, 'US'),
  updatedAt: isoText(transactions.updatedAt),
  refundedAt: isoText<string | null>(transactions.refundedAt),
  chargebackAt: isoText<string | null>(transactions.chargebackAt),
  paymentLinkId: transactions.paymentLinkId,
  connector: connectorOf(transactions),
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
  query: WalletListQuery,
): Promise<Page<Record<string, unknown>>> {
  const scope = { list: 'wallet-transactions', ...merchant };
  const { direction, cursor } = position(masterKey, scope, query);
  const args: Args = {
    merchantId: merchant.merchantId,
    mode: merchant.mode,
    start: query.transaction_start_date,
    end: query.transaction_end_date,
    reference: query.order_id,
    step: query.transaction_type,
    walletId: query.wallet_id,
    at: cursor?.at,
    id: cursor?.id,
  };
  const [rows, total] = await Promise.all([
    fetchPage(db, 'wallet_transactions', direction, args, query.limit + 1, () =>
      entryPage(db, placeholders(args), direction, query.limit + 1),
    ),
    cachedCount(db, scope, query, ledgerEntries, entryFilters(db, values(args))),
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

/** The entries of the merchant's wallets of the mode. */
function entryFilters(db: Db, v: Bind): SQL[] {
  const e = ledgerEntries;
  const mine = db
    .select({ id: wallets.id })
    .from(wallets)
    .where(
      and(
        ...given(v('merchantId'), (id) => eq(wallets.merchantId, id)),
        ...given(v('mode'), (mode) => eq(wallets.mode, mode)),
      ),
    );
  return [
    inArray(e.walletId, mine),
    ...period(e.createdAt, v('start'), v('end')),
    ...given(v('reference'), (reference) => eq(e.reference, reference)),
    ...given(v('step'), (step) => eq(e.step, step)),
    ...given(v('walletId'), (walletId) => eq(e.walletId, walletId)),
  ];
}

/** A page of ledger entries with each wallet's currency, as `transactionPage`. */
function entryPage(db: Db, v: Bind, direction: 'next' | 'prev', size: number) {
  const e = ledgerEntries;
  const at = v('at');
  const id = v('id');
  const order = direction === 'next' ? [desc(e.createdAt), desc(e.id)] : [asc(e.createdAt), asc(e.id)];
  return db
    .select({ entry: e, currency: wallets.currency, at: sql<string>`${e.createdAt}::text` })
    .from(e)
    .innerJoin(wallets, eq(wallets.id, e.walletId))
    .where(
      and(
        ...entryFilters(db, v),
        ...(at && id ? [beyond(e.createdAt, e.id, { at, id }, direction, 'bigint')] : []),
      ),
    )
    .orderBy(...order)
    .limit(literalLimit(size));
}
