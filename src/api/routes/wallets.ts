import type { FastifyInstance } from 'fastify';
import { and, asc, eq } from 'drizzle-orm';
import { wallets } from '../../db/schema/index';
import type { AppDeps } from '../app';
import { JsonNumber } from '../../lib/json';

export async function walletRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get('/api/v1/wallet', { onRequest: app.authenticate }, async (request) => {
    const { merchantId, mode } = request.merchant;
    const rows = await deps.db
      .select()
      .from(wallets)
      .where(and(eq(wallets.merchantId, merchantId), eq(wallets.mode, mode)))
      .orderBy(asc(wallets.currency), asc(wallets.createdAt));
    return {
      message: 'Wallets retrieved successfully.',
      data: rows.map((w) => ({
        wallet_id: w.id,
        currency: w.currency,
        amount: new JsonNumber(w.available.toString()),
        status: w.status,
      })),
    };
  });
}
