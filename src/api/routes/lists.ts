import { z } from 'zod';
import { LEDGER_STEPS, TRANSACTION_KINDS, TRANSACTION_STATUSES } from '../../lib/vocabulary';
import { listTransactions, listWalletTransactions } from '../../transactions/lists';
import { about, optional, text, SPACE } from '../../schemas/fields';
import { ModeParams, type Api } from '../route';
import type { RouteDeps } from '../deps';
import { TransactionPage, WalletTransactionPage } from '../../schemas/answers';

/** A calendar day that exists: `2026-02-30` and year 0 are refused, not rolled over or sent to Postgres. */
export const isoDate = (field: string) =>
  text(field, {
    max: 64,
    check: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && v >= '0001-01-01' && dayExists(v),
    rule: 'a calendar day that exists, as YYYY-MM-DD',
    pattern: `^${SPACE}*[0-9]{4}-[0-9]{2}-[0-9]{2}${SPACE}*$`,
  }).meta({ format: 'date' });

function dayExists(day: string): boolean {
  const parsed = new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === day;
}

/** At most 100 a page. */
export const pageLimit = optional(
  about(
    text('limit', {
      max: 3,
      check: (v) => /^\d+$/.test(v) && +v >= 1 && +v <= 100,
      rule: '1 to 100',
      pattern: '^0*(100|[1-9][0-9]?)$',
    }),
    'Page size, 20 unless given.',
  ),
);

/** The period a list covers, UTC days included. */
export const period = {
  transaction_start_date: optional(
    about(isoDate('transaction_start_date'), 'First day of the period (UTC), included.'),
  ),
  transaction_end_date: optional(
    about(isoDate('transaction_end_date'), 'Last day of the period (UTC), included.'),
  ),
};

export const nextCursor = optional(
  about(text('nextCursor', { max: 512 }), 'The page after the one whose `meta.nextCursor` this is.'),
);

const oneOf = <T extends string>(field: string, values: readonly T[]) =>
  text(field, {
    max: 32,
    check: (v) => (values as readonly string[]).includes(v),
    rule: `one of ${values.join(', ')}`,
  })
    .meta({ enum: [...values] })
    .transform((v) => v as T);

/** What both lists share: the period, the cursor, the page size and the order (or reference) filter. */
const paging = (orderIdMeans: string) => ({
  ...period,
  nextCursor,
  prevCursor: optional(
    about(text('prevCursor', { max: 512 }), 'The page before the one whose `meta.prevCursor` this is.'),
  ),
  order_id: optional(about(text('order_id', { max: 191 }), orderIdMeans)),
  limit: pageLimit,
});

const oneCursor = (query: { nextCursor?: string; prevCursor?: string }, ctx: z.RefinementCtx) => {
  if (query.nextCursor !== undefined && query.prevCursor !== undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['prevCursor'],
      message: 'Give nextCursor or prevCursor, not both.',
    });
};

export const ListRequest = z
  .object({
    ...paging('Only the transaction with this order id.'),
    status: optional(about(oneOf('status', TRANSACTION_STATUSES), 'Only transactions with this status.')),
    transaction_type: optional(about(oneOf('transaction_type', TRANSACTION_KINDS), 'Only this kind.')),
  })
  .superRefine(oneCursor);

/**
 * Ledger entries have a step, not a status or a kind: `transaction_type` filters by the step, `wallet_id`
 * by one of the merchant's wallets, and `status` is refused rather than ignored.
 */
export const WalletListRequest = z
  .object({
    ...paging('Only the entries of this transaction (its id).'),
    transaction_type: optional(about(oneOf('transaction_type', LEDGER_STEPS), 'Only this ledger step.')),
    wallet_id: optional(about(text('wallet_id', { max: 64 }), "Only this wallet's entries.")),
    status: z.unknown().optional().meta({
      not: {},
      description: 'Refused (422): ledger entries have no status; filter by `transaction_type`.',
    }),
  })
  .superRefine((query, ctx) => {
    oneCursor(query, ctx);
    if (query.status !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['status'],
        message: 'Wallet transactions have no status; filter them by transaction_type (the ledger step).',
      });
  });

/** At most 100 a page, 20 unless asked. */
const pageSize = (limit: string | undefined) => (limit === undefined ? 20 : Number(limit));

/**
 * `GET /api/v1/{test|live}-transactions` and `GET /api/v1/{test|live}-wallet-transactions`, the vendor
 * SDK's `TXN` lists (docs/api.md): the mode is in the path, and must be the key's.
 */
export async function listRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.get(
    '/api/v1/:mode-transactions',
    {
      schema: {
        operationId: 'listTransactions',
        tags: ['Transactions'],
        summary: 'Transactions, newest first',
        description:
          "The key's mode's transactions, paged by keyset: a page does not move while new transactions " +
          "arrive. The path's mode must be the key's (`401` otherwise). A cursor is signed for the merchant, " +
          'mode and list that issued it; any other is `422`.',
        params: ModeParams,
        querystring: ListRequest,
      },
      config: {
        reference: { answer: { schema: TransactionPage, description: 'A page of transactions.' } },
      },
      onRequest: app.authenticate,
    },
    async (request) => {
      const { limit, ...query } = request.query;
      return listTransactions(deps.db, deps.config.MASTER_KEY, request.merchant, {
        ...query,
        limit: pageSize(limit),
      });
    },
  );
  app.get(
    '/api/v1/:mode-wallet-transactions',
    {
      schema: {
        operationId: 'listWalletTransactions',
        tags: ['Transactions'],
        summary: 'Wallet ledger entries, newest first',
        description: "The entries of the key's mode's wallets, paged as the transactions are.",
        params: ModeParams,
        querystring: WalletListRequest,
      },
      config: {
        reference: { answer: { schema: WalletTransactionPage, description: 'A page of ledger entries.' } },
      },
      onRequest: app.authenticate,
    },
    async (request) => {
      const { limit, status: _refused, ...query } = request.query;
      return listWalletTransactions(deps.db, deps.config.MASTER_KEY, request.merchant, {
        ...query,
        limit: pageSize(limit),
      });
    },
  );
}
