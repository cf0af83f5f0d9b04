import type { FastifyInstance } from 'fastify';
import type { TransactionKind } from '../../contracts';
import type { TransactionRow } from '../../transactions/view';
import {
  finalStatePage,
  issueCsrf,
  limitPageRate,
  merchantReturnUrl,
  notFoundPage,
  originOf,
  expiredPage,
  sendPage,
  verifyCsrf,
} from './hosted';
import { escapeHtml, renderPage } from './layout';
import type { PageDeps } from '../deps';

export interface DecisionPage {
  kinds: TransactionKind[];
  /** Route path with `:mode` and `:id`, e.g. `/api/v1/:mode/card/checkout/:id`. */
  path: string;
  /** The status in which the page takes an answer. */
  awaiting: TransactionRow['status'];
  title: string;
  heading: string;
  details(row: TransactionRow): [string, string][];
  approve: string;
  decline: string;
  note: string;
  /** Which awaiting transactions take an approve/decline; the others get `otherPage`. Default: all. */
  takesDecision?: (row: TransactionRow) => boolean;
  /** The page for awaiting transactions that take no decision here (e.g. a crypto deposit page). */
  otherPage?: (
    row: TransactionRow,
    form: { csrf: string; path: string },
  ) => { body: string; refreshSeconds?: number };
}

/**
 * A hosted page where the customer approves or declines (3DS challenge, payout verification). Works
 * without JavaScript; the answer goes to the workflow as an update; a repeat or late answer changes
 * nothing and shows the final state; afterwards the customer goes back to the merchant when it gave a URL.
 */
export function registerDecisionPage(app: FastifyInstance, deps: PageDeps, page: DecisionPage): void {
  type Params = { Params: { mode: string; id: string } };
  const pathFor = (mode: string, id: string) => page.path.replace(':mode', mode).replace(':id', id);

  app.get<Params>(page.path, async (request, reply) => {
    await limitPageRate(deps, request);
    const { mode, id } = request.params;
    const row = await deps.services.findHostedTransaction(deps.db, mode, page.kinds, id);
    if (!row) return notFoundPage(reply);
    if (row.status !== page.awaiting) return finalStatePage(reply, row);
    const path = pathFor(mode, id);
    const form = { csrf: issueCsrf(reply, deps, id, path), path };
    const content =
      page.otherPage && !(page.takesDecision?.(row) ?? true)
        ? page.otherPage(row, form)
        : decisionForm(page, row, form);
    return sendPage(
      reply,
      renderPage({ title: page.title, formTargets: originOf(row.merchantRedirectUrl), ...content }),
    );
  });

  app.post<Params & { Body: Record<string, string> }>(page.path, async (request, reply) => {
    await limitPageRate(deps, request);
    const { mode, id } = request.params;
    const row = await deps.services.findHostedTransaction(deps.db, mode, page.kinds, id);
    if (!row) return notFoundPage(reply);
    const { decision, csrf } = request.body ?? {};
    if (!verifyCsrf(request, deps.masterKey, id, csrf) || (decision !== 'approve' && decision !== 'decline'))
      return expiredPage(reply);
    const takes = row.status === page.awaiting && (page.takesDecision?.(row) ?? true);
    const accepted = takes && (await deps.services.submitDecision(deps.temporal, row, decision));
    const after = (await deps.services.findTransaction(deps.db, id)) ?? row;
    const back = accepted ? merchantReturnUrl(after) : undefined;
    return back ? reply.redirect(back, 303) : finalStatePage(reply, after);
  });
}

/** The page's details and its approve / decline form. */
function decisionForm(page: DecisionPage, row: TransactionRow, form: { csrf: string; path: string }) {
  const details = page
    .details(row)
    .map(([label, value]) => `<dt>${escapeHtml(label)}</dt><dd>${escapeHtml(value)}</dd>`)
    .join('\n');
  return {
    body: `<h1>${escapeHtml(page.heading)}</h1>
<dl>
${details}
</dl>
<form method="post" action="${escapeHtml(form.path)}">
<input type="hidden" name="csrf" value="${escapeHtml(form.csrf)}">
<div class="actions">
<button class="approve" type="submit" name="decision" value="approve">${escapeHtml(page.approve)}</button>
<button class="decline" type="submit" name="decision" value="decline">${escapeHtml(page.decline)}</button>
</div>
</form>
<p class="note">${escapeHtml(page.note)}</p>`,
  };
}
