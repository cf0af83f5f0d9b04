import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  country,
  email,
  fiatCurrency,
  minorAmount,
  optional,
  orderId,
  parseInput,
  phoneNumber,
  terminalId,
  text,
} from '../fields';
import type { PageDeps, RouteDeps } from '../deps';
import { createLink, findLink, listTemplates, LINK_MAX_DAYS } from '../../transactions/links';
import { createHostedCardPayment } from '../../transactions/card';
import { linkUsedUpdate, workflowIds } from '../../contracts';
import { ApiError } from '../../platform/errors';
import { currencyExponent, isFiatCurrency } from '../../lib/currencies';
import { formatMinor } from '../../lib/money';
import { parseUnits } from '../../lib/units';
import {
  expiredPage,
  issueCsrf,
  limitPageRate,
  merchantName,
  notFoundPage,
  sendPage,
  verifyCsrf,
} from '../pages/hosted';
import { escapeHtml, renderPage } from '../pages/layout';

/** `expiry_date`: a day (`YYYY-MM-DD`, the link closes at its end, UTC) or an ISO 8601 time, in the future. */
const expiryDate = text('expiry_date', { max: 40 }).transform((value, ctx) => {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const at = new Date(day ? `${value}T23:59:59.999Z` : value);
  const valid = !Number.isNaN(at.getTime()) && (!day || at.toISOString().slice(0, 10) === value);
  if (!valid) {
    ctx.addIssue({
      code: 'custom',
      message: 'The expiry date field must be a date (YYYY-MM-DD) or an ISO 8601 time.',
    });
    return z.NEVER;
  }
  if (at.getTime() <= Date.now() || at.getTime() > Date.now() + LINK_MAX_DAYS * 86_400_000) {
    ctx.addIssue({
      code: 'custom',
      message: `The expiry date field must be in the future and within ${LINK_MAX_DAYS} days.`,
    });
    return z.NEVER;
  }
  return at;
});

const LinkRequest = z
  .object({
    payment_template_id: text('payment_template_id', { max: 64 }),
    amount: optional(minorAmount('amount')),
    currency: optional(fiatCurrency('currency')),
    expiry_date: optional(expiryDate),
    terminal_id: optional(terminalId()),
    order_id: optional(orderId()),
  })
  .superRefine((input, ctx) => {
    if (input.amount !== undefined && input.currency === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['currency'],
        message: 'The currency field is required with an amount.',
      });
  });

/**
 * Payment page templates (`GET /api/v1/payment-templates`) and card payment links
 * (`POST /api/v1/payment-link`, plain or in the envelope) for the key's mode (docs/hosted.md).
 */
export async function linkRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.get('/api/v1/payment-templates', { onRequest: app.authenticate }, async (request) => ({
    message: 'Payment templates retrieved successfully.',
    data: await listTemplates(deps.db, request.merchant),
  }));

  app.post(
    '/api/v1/payment-link',
    { onRequest: app.authenticate, preValidation: app.decryptBodyIfEnveloped },
    async (request) => {
      const input = parseInput(LinkRequest, request.body ?? {});
      const url = await createLink(
        {
          db: deps.db,
          temporal: deps.temporal,
          taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
          baseUrl: deps.config.baseUrl,
        },
        request.merchant,
        input,
      );
      return { message: 'Payment link created successfully.', data: url };
    },
  );
}

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
    if (!found) return notFoundPage(reply);
    const closed = closedReason(found);
    if (closed) return closedPage(reply, closed);
    return linkPage(reply, deps, found, pathOf(found.link.mode, found.link.id), {}, {});
  });

  app.post<Params & { Body: Record<string, string> }>(path, async (request, reply) => {
    await limitPageRate(deps, request);
    const found = await findLink(deps.db, request.params.mode, request.params.id);
    if (!found) return notFoundPage(reply);
    const body = request.body ?? {};
    if (!verifyCsrf(request, deps.masterKey, found.link.id, body.csrf)) return expiredPage(reply);
    const closed = closedReason(found);
    if (closed) return closedPage(reply, closed);

    const errors: Record<string, string> = {};
    const customer = CustomerForm.safeParse(
      Object.fromEntries(CUSTOMER_FIELDS.map(([name]) => [name, body[name] ?? ''])),
    );
    if (!customer.success)
      for (const issue of customer.error.issues) errors[String(issue.path[0])] ??= issue.message;
    const amount = amountOf(found, body, errors);
    if (!customer.success || !amount) {
      return linkPage(reply, deps, found, pathOf(found.link.mode, found.link.id), errors, body, 422);
    }

    const { link, template } = found;
    let created;
    try {
      created = await createHostedCardPayment(
        deps.transactions,
        { merchantId: link.merchantId, mode: link.mode },
        {
          ...customer.data,
          ip_address: clientAddress(request),
          amount: amount.minor,
          currency: amount.currency,
          redirect_url: template.redirectUrl,
          ...(template.webhookUrl ? { webhook_url: template.webhookUrl } : {}),
          order_id: link.orderId ?? link.id,
          ...(link.terminalId ? { terminal_id: link.terminalId } : {}),
        },
        { paymentLinkId: link.id },
      );
    } catch (error) {
      // The link's order id already made a transaction with other details: the link was used.
      if (error instanceof ApiError && error.status === 409) return closedPage(reply, 'used');
      throw error;
    }
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

function closedReason({ link }: Link): 'used' | 'expired' | undefined {
  if (link.status === 'used') return 'used';
  if (link.status === 'expired' || link.expiresAt.getTime() <= Date.now()) return 'expired';
  return undefined;
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
  if (minor === undefined || minor <= 0n) {
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
${error ? `<p class="error" id="${name}-error">${escapeHtml(error)}</p>` : ''}
</div>`;
  };
  const fixed = link.amountMinor !== null && link.currency;
  const count = Object.keys(errors).length;
  const merchant = await merchantName(deps.db, link.merchantId);
  const body = `<h1>${escapeHtml(merchant ? `Pay ${merchant}` : 'Payment')}</h1>
<dl>
${fixed ? `<dt>Amount</dt><dd>${escapeHtml(`${formatMinor(link.amountMinor!, link.currency!)} ${link.currency}`)}</dd>` : ''}
${link.orderId ? `<dt>Order</dt><dd>${escapeHtml(link.orderId)}</dd>` : ''}
</dl>
${count ? `<p class="error alert" role="alert">${count === 1 ? 'Check the highlighted field below.' : `Check the ${count} highlighted fields below.`}</p>` : ''}
<form method="post" action="${escapeHtml(path)}" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
${fixed ? '' : field('amount', link.currency ? `Amount (${link.currency})` : 'Amount', 'transaction-amount', 'type="text" inputmode="decimal" required')}
${fixed || link.currency ? '' : field('currency', 'Currency (e.g. USD)', 'off', 'type="text" maxlength="3" required')}
${CUSTOMER_FIELDS.map(([name, label, autocomplete]) => field(name, label, autocomplete, 'type="text" required')).join('\n')}
<div class="actions"><button class="approve" type="submit">Continue to card details</button></div>
</form>`;
  return sendPage(reply, renderPage({ title: 'Payment', body }), status);
}
