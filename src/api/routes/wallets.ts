import type { FastifyInstance } from 'fastify';
import { JsonNumber } from '../../lib/json';
import { listWallets } from '../../wallets/wallets';
import type { RouteDeps } from '../deps';

export async function walletRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.get('/api/v1/wallet', { onRequest: app.authenticate }, async (request) => {
    const rows = await listWallets(deps.db, request.merchant);
    return {
      message: 'Wallets retrieved successfully.',
      data: rows.map((w) => ({
        wallet_id: w.id,
        currency: w.currency,
        amount: new JsonNumber(w.available.toString()),
        // Every wallet pays out to cards: card payouts are the only payout method (docs/api.md).
        payment_method: 'CARD',
        status: w.status,
      })),
    };
  });
}
