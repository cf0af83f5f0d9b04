import type { FastifyInstance } from 'fastify';
import { finalStatePage, limitPageRate, merchantReturnUrl, notFoundPage } from './hosted';
import type { PageDeps } from '../deps';

/**
 * Where an acquirer's own 3-D Secure page (Stripe's) sends the cardholder back. The visit only tells the
 * workflow to ask the acquirer for the result; nothing in the request decides it, so a forged or early
 * visit cannot approve or fail a payment (an unfinished challenge is asked about again later).
 */
const RETURN_WAIT_MS = 8_000;

export async function cardReturnRoutes(app: FastifyInstance, deps: PageDeps): Promise<void> {
  app.get<{ Params: { mode: string; id: string } }>(
    '/api/v1/:mode/card/return/:id',
    async (request, reply) => {
      await limitPageRate(deps, request);
      const { mode, id } = request.params;
      const row = await deps.services.findHostedTransaction(deps.db, mode, ['card'], id);
      if (!row) return notFoundPage(reply);
      // A challenge on our own hosted page is answered there, with its CSRF token; never through this URL.
      const ownPage = `/api/v1/${mode}/card/checkout/${id}`;
      if (row.status === 'REDIRECT' && row.redirectUrl?.endsWith(ownPage))
        return reply.redirect(ownPage, 303);
      if (row.status === 'REDIRECT') {
        // The answer usually comes at once; when Stripe has not settled it yet the workflow keeps asking, and
        // the cardholder sees where the payment stands instead of waiting on the page.
        const submitted = deps.services.submitDecision(deps.temporal, row, 'approve').catch(() => false);
        await Promise.race([submitted, new Promise((resolve) => setTimeout(resolve, RETURN_WAIT_MS))]);
      }
      const after = (await deps.services.findTransaction(deps.db, id)) ?? row;
      const back = merchantReturnUrl(after);
      return back ? reply.redirect(back, 303) : finalStatePage(reply, after);
    },
  );
}
