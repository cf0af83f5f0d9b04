import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { cardFields, checkCardExpiry } from '../../schemas/card-fields';
import type { PageDeps } from '../deps';
import type { TransactionRow } from '../../transactions/view';
import { brandName } from '../../lib/cards';
import { formatMinor } from '../../lib/money';
import {
  expiredPage,
  issueCsrf,
  limitPageRate,
  notFoundPage,
  originOf,
  sendOnward,
  sendPage,
  underLabel,
  verifyCsrf,
} from './hosted';
import { escapeHtml, renderPage } from './layout';

const CardForm = z.object(cardFields(true)).superRefine(checkCardExpiry);

type FormErrors = Partial<
  Record<'card_number' | 'card_expiry_month' | 'card_expiry_year' | 'card_cvv', string>
>;

/** What the form shows again after a refusal: never the number or the CVV, only what was read of them. */
interface Refill {
  month?: string;
  year?: string;
  /** The brand and last four of a number that was valid, so the customer sees what was read. */
  cardRead?: string;
}

const PAGE_PATH = '/api/v1/:mode/hosted/card/:id';

/**
 * The hosted payment page: the customer types the card; it goes from the form to the encrypted vault
 * (never to a log or to Temporal history), the workflow is told the card's summary, and the customer
 * is sent where the payment leads: the 3-D Secure challenge, or back to the merchant.
 */
export async function hostedCardPageRoutes(app: FastifyInstance, deps: PageDeps): Promise<void> {
  type Params = { Params: { mode: string; id: string } };
  const pathOf = (mode: string, id: string) => `/api/v1/${mode}/hosted/card/${id}`;

  app.get<Params>(PAGE_PATH, async (request, reply) => {
    await limitPageRate(deps, request);
    const { mode, id } = request.params;
    const row = await deps.services.findHostedTransaction(deps.db, mode, ['card'], id);
    if (!row) return notFoundPage(reply);
    if (!awaitsCard(row)) return sendOnward(reply, row);
    return cardPage(reply, deps, row, pathOf(mode, id), {}, {});
  });

  app.post<Params & { Body: Record<string, string> }>(PAGE_PATH, async (request, reply) => {
    await limitPageRate(deps, request);
    const { mode, id } = request.params;
    const row = await deps.services.findHostedTransaction(deps.db, mode, ['card'], id);
    if (!row) return notFoundPage(reply);
    const body = request.body ?? {};
    if (!verifyCsrf(request, deps.masterKey, id, body.csrf)) return expiredPage(reply);
    if (!awaitsCard(row)) return sendOnward(reply, row);

    const parsed = CardForm.safeParse({
      card_number: body.card_number ?? '',
      card_expiry_month: body.card_expiry_month ?? '',
      card_expiry_year: body.card_expiry_year ?? '',
      card_cvv: body.card_cvv ?? '',
    });
    if (!parsed.success) {
      const errors: FormErrors = {};
      for (const issue of parsed.error.issues) {
        const field = issue.path[0] as keyof FormErrors;
        errors[field] ??= issue.message;
      }
      const number = String(body.card_number ?? '').replace(/[\s-]/g, '');
      const numberRead = !errors.card_number && /^\d{12,19}$/.test(number);
      return cardPage(
        reply,
        deps,
        row,
        pathOf(mode, id),
        errors,
        {
          month: body.card_expiry_month,
          year: body.card_expiry_year,
          ...(numberRead ? { cardRead: `${brandName(number)} ending ${number.slice(-4)}` } : {}),
        },
        422,
      );
    }

    const card = parsed.data;
    const after = await deps.services.submitHostedCard(
      { db: deps.db, temporal: deps.temporal, masterKey: deps.masterKey, holdSeconds: deps.cardHoldSeconds },
      row,
      {
        pan: card.card_number,
        cvv: card.card_cvv,
        expiryMonth: card.card_expiry_month,
        expiryYear: card.card_expiry_year,
      },
    );
    // Where the payment now stands; a card another tab entered first leads there too.
    return sendOnward(reply, after);
  });
}

/** Waiting on this page: sent here, and no card entered yet. */
function awaitsCard(row: TransactionRow): boolean {
  return row.status === 'REDIRECT' && row.cardFingerprint === null;
}

function refusalSummary(count: number): string {
  return count === 1 ? 'Check the highlighted field below.' : `Check the ${count} highlighted fields below.`;
}

/** The card form, with each refusal next to its field. */
async function cardPage(
  reply: FastifyReply,
  deps: PageDeps,
  row: TransactionRow,
  path: string,
  errors: FormErrors,
  refill: Refill,
  status = 200,
): Promise<FastifyReply> {
  const csrf = issueCsrf(reply, deps, row.id, path);
  const amount = `${formatMinor(row.amountMinor ?? 0n, row.currency)} ${row.currency}`;
  const field = (name: keyof FormErrors, label: string, attributes: string, value = '') => {
    const error = errors[name];
    const described = error ? ` aria-invalid="true" aria-describedby="${name}-error"` : '';
    return `<div class="field${error ? ' invalid' : ''}">
<label for="${name}">${escapeHtml(label)}</label>
<input id="${name}" name="${name}" ${attributes}${value ? ` value="${escapeHtml(value)}"` : ''}${described}>
${error ? `<p class="error" id="${name}-error">${escapeHtml(underLabel(error, label))}</p>` : ''}
</div>`;
  };
  const first = Object.values(errors).length > 0;
  const merchant = await deps.services.merchantName(deps.db, row.merchantId);
  const body = `<h1>Pay ${escapeHtml(merchant)}</h1>
<dl>
<dt>Amount</dt><dd>${escapeHtml(amount)}</dd>
${row.orderId ? `<dt>Order</dt><dd>${escapeHtml(row.orderId)}</dd>` : ''}
</dl>
${first ? `<p class="error alert" role="alert">${escapeHtml(refusalSummary(Object.keys(errors).length))}</p>` : ''}
<form method="post" action="${escapeHtml(path)}" autocomplete="on" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
${field('card_number', 'Card number', 'type="text" inputmode="numeric" autocomplete="cc-number" maxlength="23" required')}
${refill.cardRead ? `<p class="note">Read as ${escapeHtml(refill.cardRead)}: enter it again.</p>` : ''}
<div class="row">
${field('card_expiry_month', 'Expiry month (MM)', 'type="text" inputmode="numeric" autocomplete="cc-exp-month" maxlength="2" placeholder="MM" required', refill.month)}
${field('card_expiry_year', 'Expiry year (YYYY)', 'type="text" inputmode="numeric" autocomplete="cc-exp-year" maxlength="4" placeholder="YYYY" required', refill.year)}
</div>
${field('card_cvv', 'Security code (CVV)', 'type="password" inputmode="numeric" autocomplete="cc-csc" maxlength="4" required')}
<div class="actions"><button class="approve" type="submit">Pay ${escapeHtml(amount)}</button></div>
</form>
<p class="note">The card goes to the payment service, not to ${escapeHtml(merchant || 'the merchant')}.</p>`;
  return sendPage(
    reply,
    renderPage({ title: 'Card payment', body, formTargets: originOf(row.merchantRedirectUrl) }),
    status,
  );
}
