import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { country, email, phoneNumber, text } from '../../schemas/fields';
import type { PageDeps } from '../deps';
import { parseInput } from '../validate';
import { findLink } from '../../transactions/links';
import { createHostedCardPayment } from '../../transactions/card';
import { createPayin } from '../../transactions/payin';
import { createRamp } from '../../transactions/ramp';
import type { Created } from '../../transactions/create';
import { PayinRequest, RampRequest } from '../../schemas/requests';
import { linkUsedUpdate, workflowIds } from '../../contracts';
import { ApiError } from '../../platform/errors';
import { currencyExponent, isFiatCurrency } from '../../lib/currencies';
import { networksOf } from '../../crypto/catalogue';
import { formatMinor } from '../../lib/money';
import { parseUnits } from '../../lib/units';
import {
  expiredPage,
  issueCsrf,
  limitPageRate,
  merchantName,
  sendPage,
  underLabel,
  verifyCsrf,
} from './hosted';
import { escapeHtml, renderPage } from './layout';

/** What the link page asks of the customer: the card request's customer fields, and the amount if open. */
const CustomerForm = z.object({
  first_name: text('first_name'),
  last_name: text('last_name'),
  email: email(),
  phone_number: phoneNumber(),
  address: text('address', { max: 255 }),
  city: text('city'),
  state: text('state'),
  zip: text('zip', { max: 20 }),
  country: country('country', 'alpha2or3'),
});

const CUSTOMER_FIELDS: [keyof z.infer<typeof CustomerForm>, string, string][] = [
  ['first_name', 'First name', 'given-name'],
  ['last_name', 'Last name', 'family-name'],
  ['email', 'Email', 'email'],
  ['phone_number', 'Phone number (with country code)', 'tel'],
  ['address', 'Address', 'street-address'],
  ['city', 'City', 'address-level2'],
  ['state', 'State or region', 'address-level1'],
  ['zip', 'Postal code', 'postal-code'],
  ['country', 'Country (two letters, e.g. US)', 'country'],
];

type Link = NonNullable<Awaited<ReturnType<typeof findLink>>>;

const CRYPTO_KINDS = { ONRAMP: 'Buy crypto', OFFRAMP: 'Sell crypto', PAYIN: 'Pay with crypto' } as const;

/** What the link page asks the customer: a card link the card request's customer; a crypto link its request's. */
function fieldsOf(link: Link['link'], networks: string[] = []): [string, string, string][] {
  if (link.kind !== 'crypto' || !link.crypto) return CUSTOMER_FIELDS;
  const network: [string, string, string][] =
    !link.crypto.crypto_network && networks.length > 1
      ? [['crypto_network', `${link.crypto.crypto_currency} network (${networks.join(', ')})`, 'off']]
      : [];
  const common: [string, string, string][] = [
    ['first_name', 'First name', 'given-name'],
    ['last_name', 'Last name', 'family-name'],
    ['email', 'Email', 'email'],
    ['phone_number', 'Phone number (with country code)', 'tel'],
    ['country', 'Country (two letters, e.g. US)', 'country'],
  ];
  if (link.crypto.transaction_type === 'PAYIN')
    return [...common, ['address', 'Address', 'street-address'], ...network];
  return [
    ...common,
    ...network,
    ['wallet_address', `Your ${link.crypto.crypto_currency} wallet address`, 'off'],
  ];
}

/** The networks a crypto link's currency is offered on, when the link leaves the network to the customer. */
async function networksFor(db: PageDeps['db'], link: Link['link']): Promise<string[]> {
  if (link.kind !== 'crypto' || !link.crypto || link.crypto.crypto_network) return [];
  return networksOf(db, link.crypto.crypto_currency);
}

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
    const found = await findLink(deps.db, request.params.mode, request.params.id);
    if (!found) return linkNotFound(reply);
    const closed = closedReason(found);
    if (closed) return closedPage(reply, closed);
    return linkPage(reply, deps, found, pathOf(found.link.mode, found.link.id), {}, {});
  });

  app.post<Params & { Body: Record<string, string> }>(path, async (request, reply) => {
    await limitPageRate(deps, request);
    const found = await findLink(deps.db, request.params.mode, request.params.id);
    if (!found) return linkNotFound(reply);
    const body = request.body ?? {};
    if (!verifyCsrf(request, deps.masterKey, found.link.id, body.csrf)) return expiredPage(reply);
    const closed = closedReason(found);
    if (closed) return closedPage(reply, closed);

    const attempt = await createFromLink(deps, found, body, clientAddress(request));
    if ('closed' in attempt) return closedPage(reply, attempt.closed);
    if ('errors' in attempt) {
      return linkPage(reply, deps, found, pathOf(found.link.mode, found.link.id), attempt.errors, body, 422);
    }
    const { created } = attempt;
    const { link } = found;
    const transactionId = String(created.body.data.transaction_id);
    const told = await deps.temporal.workflow
      .getHandle(workflowIds.paymentLink(link.id))
      .executeUpdate(linkUsedUpdate, { args: [{ transactionId }] })
      .then(
        () => true,
        () => false,
      );
    if (!told && !created.replayed)
      deps.log?.warn({ linkId: link.id, transactionId }, 'link workflow refused use');
    return created.body.redirect_url
      ? reply.redirect(created.body.redirect_url, 303)
      : closedPage(reply, 'used');
  });
}

type Attempt = { created: Created } | { errors: Record<string, string> } | { closed: 'used' };

/**
 * Creates the link's transaction from what the customer typed: a hosted card payment for a card link, the
 * ramp or payin a crypto link fixes otherwise, each validated as its create request is (the customer's
 * mistakes come back by field), with the link's order id, so a link only ever makes one.
 */
async function createFromLink(
  deps: PageDeps,
  { link, template }: Link,
  body: Record<string, string>,
  ipAddress: string,
): Promise<Attempt> {
  const merchant = { merchantId: link.merchantId, mode: link.mode };
  const closing = {
    redirect_url: template.redirectUrl,
    ...(template.webhookUrl ? { webhook_url: template.webhookUrl } : {}),
    order_id: link.orderId ?? link.id,
    ...(link.terminalId ? { terminal_id: link.terminalId } : {}),
  };
  const origin = { paymentLinkId: link.id };
  const fields = fieldsOf(link, await networksFor(deps.db, link));
  const typed = Object.fromEntries(fields.map(([name]) => [name, String(body[name] ?? '')]));
  try {
    if (link.kind === 'crypto' && link.crypto) {
      const { transaction_type: type, ...terms } = link.crypto;
      const request = { ...typed, ...terms, ip_address: ipAddress, ...closing };
      if (type === 'PAYIN') {
        const { fiat_amount, fiat_currency, ...rest } = request as typeof request & { fiat_amount: string };
        const input = parseInput(PayinRequest, { ...rest, amount: fiat_amount, currency: fiat_currency });
        return { created: await createPayin(deps.transactions, merchant, input, origin) };
      }
      const input = parseInput(RampRequest, { ...request, transaction_type: type });
      return { created: await createRamp(deps.transactions, merchant, input, origin) };
    }
    const errors: Record<string, string> = {};
    const customer = CustomerForm.safeParse(typed);
    if (!customer.success)
      for (const issue of customer.error.issues) errors[String(issue.path[0])] ??= issue.message;
    const amount = amountOf({ link, template }, body, errors);
    if (!customer.success || !amount) return { errors };
    const input = {
      ...customer.data,
      ip_address: ipAddress,
      amount: amount.minor,
      currency: amount.currency,
    };
    return {
      created: await createHostedCardPayment(deps.transactions, merchant, { ...input, ...closing }, origin),
    };
  } catch (error) {
    // The link's order id already made a transaction with other details: the link was used.
    if (error instanceof ApiError && error.status === 409) return { closed: 'used' };
    if (error instanceof ApiError && error.code === 'VALIDATION')
      return { errors: formErrors(error, fields) };
    throw error;
  }
}

/** A create's refusal as the form shows it: by field where the customer typed it, else in the alert. */
function formErrors(error: ApiError, fields: [string, string, string][]): Record<string, string> {
  const shown = new Set(fields.map(([name]) => name));
  const errors: Record<string, string> = {};
  for (const [field, messages] of Object.entries(error.extra.errors ?? {}))
    errors[shown.has(field) ? field : 'form'] ??= messages[0] ?? error.message;
  if (Object.keys(errors).length === 0) errors.form = error.message;
  return errors;
}

function closedReason({ link }: Link): 'used' | 'expired' | undefined {
  if (link.status === 'used') return 'used';
  if (link.status === 'expired' || link.expiresAt.getTime() <= Date.now()) return 'expired';
  return undefined;
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

/** The link's fixed amount, or the one the customer typed (major units, e.g. `10.50`). */
function amountOf(
  { link }: Link,
  body: Record<string, string>,
  errors: Record<string, string>,
): { minor: bigint; currency: string } | undefined {
  if (link.amountMinor !== null && link.currency) return { minor: link.amountMinor, currency: link.currency };
  const currency =
    link.currency ??
    String(body.currency ?? '')
      .trim()
      .toUpperCase();
  if (!isFiatCurrency(currency)) {
    errors.currency = 'The currency field must be a three-letter ISO 4217 code.';
    return undefined;
  }
  const exponent = currencyExponent(currency) ?? 2;
  const minor = parseUnits(String(body.amount ?? '').trim(), exponent);
  // At most what the API takes in minor units (18 digits).
  if (minor === undefined || minor <= 0n || minor >= 10n ** 18n) {
    errors.amount = `The amount field must be a positive amount with at most ${exponent} decimals.`;
    return undefined;
  }
  return { minor, currency };
}

async function linkPage(
  reply: FastifyReply,
  deps: PageDeps,
  { link }: Link,
  path: string,
  errors: Record<string, string>,
  refill: Record<string, string>,
  status = 200,
): Promise<FastifyReply> {
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
  const merchant = await merchantName(deps.db, link.merchantId);
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
${fieldsOf(link, await networksFor(deps.db, link))
  .map(([name, label, autocomplete]) => field(name, label, autocomplete, 'type="text" required'))
  .join('\n')}
<div class="actions"><button class="approve" type="submit">${crypto ? 'Continue to payment' : 'Continue to card details'}</button></div>
</form>`;
  return sendPage(reply, renderPage({ title: 'Payment', body }), status);
}
