import type { FastifyInstance, FastifyReply } from 'fastify';
import type { PageDeps } from '../deps';
import { detailsOf, type TransactionRow } from '../../transactions/view';
import { awaitsApmMethod } from '../../transactions/apm-methods';
import { isApmMethod, type ApmMethod } from '../../contracts';
import { formatMinor } from '../../lib/money';
import { registerDecisionPage } from './decision-page';
import {
  expiredPage,
  formErrorPage,
  issueCsrf,
  limitPageRate,
  notFoundPage,
  originOf,
  sendOnward,
  sendPage,
  verifyCsrf,
} from './hosted';
import { escapeHtml, renderPage } from './layout';

/** What the customer reads for each method. */
const METHOD_NAMES: Record<ApmMethod, { label: string; hint: string }> = {
  bank_redirect: { label: 'Bank transfer', hint: 'Approve the payment in your online bank.' },
  wallet: { label: 'Wallet', hint: 'Pay from your digital wallet.' },
};

/**
 * The APM pages: the methods page, where the customer picks a method (the workflow answers with the
 * provider's page), and the sandbox providers' stand-in page, where the customer approves or declines.
 */
export async function apmPageRoutes(app: FastifyInstance, deps: PageDeps): Promise<void> {
  type Params = { Params: { mode: string; id: string } };
  const path = '/api/v1/:mode/apm/:id';
  const pathOf = (mode: string, id: string) => `/api/v1/${mode}/apm/${id}`;

  app.get<Params>(path, async (request, reply) => {
    await limitPageRate(deps, request);
    const { mode, id } = request.params;
    const row = await deps.services.findHostedTransaction(deps.db, mode, ['apm'], id);
    if (!row) return notFoundPage(reply);
    if (!awaitsApmMethod(row)) return sendOnward(reply, row);
    return methodsPage(reply, deps, row, pathOf(mode, id));
  });

  app.post<Params & { Body: Record<string, string> }>(path, async (request, reply) => {
    await limitPageRate(deps, request);
    const { mode, id } = request.params;
    const row = await deps.services.findHostedTransaction(deps.db, mode, ['apm'], id);
    if (!row) return notFoundPage(reply);
    const { method, csrf } = request.body ?? {};
    if (!verifyCsrf(request, deps.masterKey, id, csrf)) return expiredPage(reply);
    if (!isApmMethod(method))
      return formErrorPage(reply, 'Choose one of the payment methods offered.', pathOf(mode, id));
    return sendOnward(reply, await deps.services.chooseApmMethod(deps, row, method));
  });

  registerDecisionPage(app, deps, {
    kinds: ['apm'],
    path: '/api/v1/:mode/apm/provider/:id',
    awaiting: 'REDIRECT',
    title: 'Approve the payment',
    heading: 'Approve the payment',
    details: (row) => [
      ['Pay to', row.descriptor ?? ''],
      ['Amount', `${formatMinor(row.amountMinor ?? 0n, row.currency)} ${row.currency}`],
      ['Method', methodLabel(detailsOf({ ...row, kind: 'apm' }).payment_method)],
    ],
    approve: 'Approve',
    decline: 'Decline',
    note: 'Sandbox provider: approving completes the payment, declining fails it.',
    takesDecision: (row) => !awaitsApmMethod(row),
    otherPage: (row) => ({
      body: `<h1>Choose a payment method first</h1>
<div class="actions"><a class="button neutral" href="${escapeHtml(pathOf(row.mode, row.id))}">Back to the payment methods</a></div>`,
    }),
  });
}

function methodLabel(method: string | undefined): string {
  return method && isApmMethod(method) ? METHOD_NAMES[method].label : '';
}

async function methodsPage(
  reply: FastifyReply,
  deps: PageDeps,
  row: TransactionRow,
  path: string,
): Promise<FastifyReply> {
  const csrf = issueCsrf(reply, deps, row.id, path);
  const methods = await deps.services.offeredApmMethods(deps.db, row);
  const amount = `${formatMinor(row.amountMinor ?? 0n, row.currency)} ${row.currency}`;
  const buttons = methods
    .map(
      (method) => `<button class="method" type="submit" name="method" value="${method}">
<span class="label">${escapeHtml(METHOD_NAMES[method].label)}</span>
<span class="hint">${escapeHtml(METHOD_NAMES[method].hint)}</span>
</button>`,
    )
    .join('\n');
  const body = `<h1>Choose how to pay</h1>
<dl>
<dt>Amount</dt><dd>${escapeHtml(amount)}</dd>
${row.orderId ? `<dt>Order</dt><dd>${escapeHtml(row.orderId)}</dd>` : ''}
</dl>
${
  methods.length === 0
    ? '<p role="alert">No payment method is available for this payment.</p>'
    : `<form method="post" action="${escapeHtml(path)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<div class="methods">
${buttons}
</div>
</form>`
}`;
  return sendPage(
    reply,
    renderPage({ title: 'Choose how to pay', body, formTargets: originOf(row.merchantRedirectUrl) }),
  );
}
