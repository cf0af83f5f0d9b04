import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../platform/errors';
import { MODES, TRANSACTION_KINDS, TRANSACTION_STATUSES, type Mode } from '../../lib/vocabulary';
import { listTransactions, listWalletTransactions, type ListQuery } from '../../transactions/lists';
import { optional, parseInput, text } from '../fields';
import type { RouteDeps } from '../deps';

export const isoDate = (field: string) =>
  text(field, {
    max: 10,
    check: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)),
    rule: 'a date as YYYY-MM-DD',
  });

/** At most 100 a page. */
export const pageLimit = optional(
  text('limit', { max: 3, check: (v) => /^\d+$/.test(v) && +v >= 1 && +v <= 100, rule: '1 to 100' }),
);

const oneOf = <T extends string>(field: string, values: readonly T[]) =>
  text(field, {
    max: 32,
    check: (v) => (values as readonly string[]).includes(v),
    rule: `one of ${values.join(', ')}`,
  }).transform((v) => v as T);

const ListRequest = z
  .object({
    transaction_start_date: optional(isoDate('transaction_start_date')),
    transaction_end_date: optional(isoDate('transaction_end_date')),
    nextCursor: optional(text('nextCursor', { max: 512 })),
    prevCursor: optional(text('prevCursor', { max: 512 })),
    status: optional(oneOf('status', TRANSACTION_STATUSES)),
    transaction_type: optional(oneOf('transaction_type', TRANSACTION_KINDS)),
    order_id: optional(text('order_id', { max: 191 })),
    limit: pageLimit,
  })
  .superRefine((query, ctx) => {
    if (query.nextCursor !== undefined && query.prevCursor !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['prevCursor'],
        message: 'Give nextCursor or prevCursor, not both.',
      });
  });

/** The query as the list reads it: at most 100 a page, 20 unless asked. */
function listQuery(request: FastifyRequest): ListQuery {
  const { limit, ...query } = parseInput(ListRequest, request.query ?? {});
  return { ...query, limit: limit === undefined ? 20 : Number(limit) };
}

/**
 * `GET /api/v1/{test|live}-transactions` and `GET /api/v1/{test|live}-wallet-transactions`, the vendor
 * SDK's `TXN` lists (docs/api.md): the mode is in the path, and must be the key's.
 */
export async function listRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const keyOf = (request: FastifyRequest, mode: Mode) => {
    if (request.merchant.mode !== mode) throw new ApiError('AUTH_INVALID');
    return request.merchant;
  };
  for (const mode of MODES) {
    app.get(`/api/v1/${mode}-transactions`, { onRequest: app.authenticate }, async (request) =>
      listTransactions(deps.db, deps.config.MASTER_KEY, keyOf(request, mode), listQuery(request)),
    );
    app.get(`/api/v1/${mode}-wallet-transactions`, { onRequest: app.authenticate }, async (request) =>
      listWalletTransactions(deps.db, deps.config.MASTER_KEY, keyOf(request, mode), listQuery(request)),
    );
  }
}
