import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PageDeps } from '../deps';
import { closedReason, type FoundLink, type LinkField } from '../../transactions/link-use';
import { formatMinor } from '../../lib/money';
import { expiredPage, issueCsrf, limitPageRate, sendPage, underLabel, verifyCsrf } from './hosted';
import { escapeHtml, renderPage } from './layout';

/** How the page asks for each field: its label and the browser's autocomplete hint. */
function labelOf(name: LinkField, link: FoundLink['link'], networks: string[]): [string, string] {
  const currency = link.crypto?.crypto_currency ?? '';
  const labels: Record<LinkField, [string, string]> = {
    first_name: ['First name', 'given-name'],
    last_name: ['Last name', 'family-name'],
    email: ['Email', 'email'],
    phone_number: ['Phone number (with country code)', 'tel'],
    address: ['Address', 'street-address'],
    city: ['City', 'address-level2'],
    state: ['State or region', 'address-level1'],
    zip: ['Postal code', 'postal-code'],
    country: ['Country (two letters, e.g. US)', 'country'],
    crypto_network: [`${currency} network (${networks.join(', ')})`, 'off'],
    wallet_address: [`Your ${currency} wallet address`, 'off'],
  };
  return labels[name];
}

const CRYPTO_KINDS = { ONRAMP: 'Buy crypto', OFFRAMP: 'Sell crypto', PAYIN: 'Pay with crypto' } as const;

/**
 * The link page: collects what the link lacks (the customer, and the amount when it is open), creates the
 * hosted card payment (order id: the link's, so one link makes one transaction) and sends the customer to
 * the card page. A used or expired link says so.
 */
export async function linkPageRoutes(app: FastifyInstance, deps: PageDeps): Promise<void> {
  type Params = { Params: { mode: string; id: string } };
  const path = '/api/v1/:mode/link/:id';
  const pathOf = (mode: string, id: string) => `/api/v1/${mode}/link/${id}`;

  app.get<Params>(path, async (request, reply) => {
    await limitPageRate(deps, request);
    const found = await deps.services.findLink(deps.db, request.params.mode, request.params.id);
    if (!found) return linkNotFound(reply);
    const closed = closedReason(found);
    if (closed) return closedPage(reply, closed);
    return linkPage(reply, deps, found, pathOf(found.link.mode, found.link.id), {}, {});
  });

  app.post<Params & { Body: Record<string, string> }>(path, async (request, reply) => {
    await limitPageRate(deps, request);
    const found = await deps.services.findLink(deps.db, request.params.mode, request.params.id);
    if (!found) return linkNotFound(reply);
    const body = request.body ?? {};
    if (!verifyCsrf(request, deps.masterKey, found.link.id, body.csrf)) return expiredPage(reply);
    const closed = closedReason(found);
    if (closed) return closedPage(reply, closed);

    const attempt = await deps.services.useLink(deps.transactions, found, body, clientAddress(request));
    if ('closed' in attempt) return closedPage(reply, attempt.closed);
    if ('errors' in attempt) {
      return linkPage(reply, deps, found, pathOf(found.link.mode, found.link.id), attempt.errors, body, 422);
    }
    const { redirect_url: onward } = attempt.created.body;
    return onward ? reply.redirect(onward, 303) : closedPage(reply, 'used');
  });
}

function linkNotFound(reply: FastifyReply): FastifyReply {
  return sendPage(
    reply,
    renderPage({
      title: 'Payment link',
      body: '<h1>Payment link not found</h1><p>Check the address you were given.</p>',
    }),
    404,
  );
}

function closedPage(reply: FastifyReply, reason: 'used' | 'expired'): FastifyReply {
  const message =
    reason === 'used' ? 'This payment link has already been used.' : 'This payment link has expired.';
  return sendPage(
    reply,
    renderPage({
      title: 'Payment link',
      body: `<h1>Payment link</h1><p role="alert">${escapeHtml(message)}</p>`,
    }),
    410,
  );
}

/** The client's address as the card request wants it (the API's trust-proxy rules already applied). */
function clientAddress(request: FastifyRequest): string {
  return request.ip.replace(/^::ffff:/, '');
}

async function linkPage(
  reply: FastifyReply,
  deps: PageDeps,
  found: FoundLink,
  path: string,
  errors: Record<string, string>,
  refill: Record<string, string>,
  status = 200,
): Promise<FastifyReply> {
  const { link } = found;
  const form = await deps.services.linkForm(deps.db, found);
  const csrf = issueCsrf(reply, deps, link.id, path);
  const field = (name: string, label: string, autocomplete: string, attributes = '') => {
    const error = errors[name];
    const described = error ? ` aria-invalid="true" aria-describedby="${name}-error"` : '';
    const value = refill[name] ? ` value="${escapeHtml(String(refill[name]))}"` : '';
    return `<div class="field${error ? ' invalid' : ''}">
<label for="${name}">${escapeHtml(label)}</label>
<input id="${name}" name="${name}" autocomplete="${autocomplete}" ${attributes}${value}${described}>
${error ? `<p class="error" id="${name}-error">${escapeHtml(underLabel(error, label))}</p>` : ''}
</div>`;
  };
  const crypto = link.kind === 'crypto' ? link.crypto : null;
  const fixed = crypto ? true : link.amountMinor !== null && link.currency;
  const { form: formError, ...fieldErrors } = errors;
  const count = Object.keys(fieldErrors).length;
  const alert = formError
    ? formError
    : count === 1
      ? 'Check the highlighted field below.'
      : count > 1
        ? `Check the ${count} highlighted fields below.`
        : '';
  const merchant = await deps.services.merchantName(deps.db, link.merchantId);
  const terms: [string, string][] = crypto
    ? [
        ['Payment', CRYPTO_KINDS[crypto.transaction_type]],
        crypto.fiat_amount
          ? ['Amount', `${crypto.fiat_amount} ${crypto.fiat_currency} in ${crypto.crypto_currency}`]
          : ['Amount', `${crypto.crypto_amount ?? ''} ${crypto.crypto_currency} for ${crypto.fiat_currency}`],
      ]
    : fixed
      ? [['Amount', `${formatMinor(link.amountMinor!, link.currency!)} ${link.currency}`]]
      : [];
  if (link.orderId) terms.push(['Order', link.orderId]);
  const body = `<h1>${escapeHtml(merchant ? `Pay ${merchant}` : 'Payment')}</h1>
<dl>
${terms.map(([label, value]) => `<dt>${escapeHtml(label)}</dt><dd>${escapeHtml(value)}</dd>`).join('\n')}
</dl>
${alert ? `<p class="error alert" role="alert">${escapeHtml(alert)}</p>` : ''}
<form method="post" action="${escapeHtml(path)}" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
${fixed ? '' : field('amount', link.currency ? `Amount (${link.currency})` : 'Amount', 'transaction-amount', 'type="text" inputmode="decimal" required')}
${fixed || link.currency ? '' : field('currency', 'Currency (e.g. USD)', 'off', 'type="text" maxlength="3" required')}
${form.fields
  .map((name) => field(name, ...labelOf(name, link, form.networks), 'type="text" required'))
  .join('\n')}
<div class="actions"><button class="approve" type="submit">${crypto ? 'Continue to payment' : 'Continue to card details'}</button></div>
</form>`;
  return sendPage(reply, renderPage({ title: 'Payment', body }), status);
}
