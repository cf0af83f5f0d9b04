import type { FastifyInstance } from 'fastify';
import { findTransaction } from '../../transactions/create';
import {
  finalStatePage,
  findHostedTransaction,
  issueCsrf,
  limitPageRate,
  merchantReturnUrl,
  notFoundPage,
  originOf,
  sendPage,
  submitDecision,
  verifyCsrf,
  type PageDeps,
} from '../pages/hosted';
import { escapeHtml, renderPage } from '../pages/layout';
import { formatMinor } from '../../money';

type Params = { Params: { mode: string; id: string } };

/** The sandbox issuer's 3DS challenge: approve or decline, no JavaScript needed. */
export async function cardCheckoutRoutes(app: FastifyInstance, deps: PageDeps): Promise<void> {
  app.get<Params>('/api/v1/:mode/card/checkout/:id', async (request, reply) => {
    await limitPageRate(deps, request);
    const { mode, id } = request.params;
    const row = await findHostedTransaction(deps.db, mode, 'card', id);
    if (!row) return notFoundPage(reply);
    if (row.status !== 'REDIRECT') return finalStatePage(reply, row);
    const path = `/api/v1/${mode}/card/checkout/${id}`;
    const csrf = issueCsrf(reply, deps, id, path);
    const amount = formatMinor(row.amountMinor ?? 0n, row.currency);
    return sendPage(
      reply,
      renderPage({
        title: '3-D Secure verification',
        formTargets: originOf(row.merchantRedirectUrl),
        body: `<h1>Confirm your payment</h1>
<dl>
<dt>Merchant</dt><dd>${escapeHtml(row.descriptor ?? '')}</dd>
<dt>Amount</dt><dd>${escapeHtml(amount)} ${escapeHtml(row.currency)}</dd>
<dt>Card</dt><dd>•••• ${escapeHtml(row.cardLast4 ?? '')}</dd>
</dl>
<form method="post" action="${escapeHtml(path)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<div class="actions">
<button class="approve" type="submit" name="decision" value="approve">Approve</button>
<button class="decline" type="submit" name="decision" value="decline">Decline</button>
</div>
</form>
<p class="note">Sandbox issuer: approving completes the payment, declining fails it.</p>`,
      }),
    );
  });

  app.post<Params & { Body: Record<string, string> }>(
    '/api/v1/:mode/card/checkout/:id',
    async (request, reply) => {
      await limitPageRate(deps, request);
      const { mode, id } = request.params;
      const row = await findHostedTransaction(deps.db, mode, 'card', id);
      if (!row) return notFoundPage(reply);
      const form = request.body ?? {};
      const decision = form.decision;
      if (
        !verifyCsrf(request, deps.masterKey, id, form.csrf) ||
        (decision !== 'approve' && decision !== 'decline')
      ) {
        return sendPage(
          reply,
          renderPage({
            title: 'Session expired',
            body: '<h1>This page has expired</h1><p>Reload the page and try again.</p>',
          }),
          403,
        );
      }
      const accepted = row.status === 'REDIRECT' && (await submitDecision(deps.temporal, id, decision));
      const after = (await findTransaction(deps.db, id)) ?? row;
      if (!accepted) return finalStatePage(reply, after);
      const back = merchantReturnUrl(after);
      return back ? reply.redirect(back, 303) : finalStatePage(reply, after);
    },
  );
}
