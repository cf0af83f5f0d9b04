import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/errors';
import { escapeHtml, newNonce, renderPage } from './layout';
import type { TransactionRow } from '../../transactions/view';
import type { PageDeps } from '../deps';

const CSRF_COOKIE = 'pa_csrf';

/** Per client address, so a page cannot be hammered. */
export async function limitPageRate(deps: PageDeps, request: FastifyRequest): Promise<void> {
  const decision = await deps.pageLimiter.take(`page:${request.ip}`);
  if (!decision.allowed)
    throw new ApiError('RATE_LIMITED', undefined, { retryAfterSeconds: decision.retryAfterSeconds });
}

function csrfToken(masterKey: string, transactionId: string, nonce: string): string {
  return createHmac('sha256', Buffer.from(masterKey, 'hex'))
    .update(`csrf:${transactionId}:${nonce}`)
    .digest('base64url');
}

/** Double-submit CSRF: a random cookie bound to the transaction by an HMAC carried in the form. */
export function issueCsrf(reply: FastifyReply, deps: PageDeps, transactionId: string, path: string): string {
  const nonce = newNonce();
  const secure = deps.secureCookies ? '; Secure' : '';
  void reply.header(
    'set-cookie',
    `${CSRF_COOKIE}=${nonce}; Path=${path}; HttpOnly; SameSite=Strict; Max-Age=86400${secure}`,
  );
  return csrfToken(deps.masterKey, transactionId, nonce);
}

export function verifyCsrf(
  request: FastifyRequest,
  masterKey: string,
  transactionId: string,
  token: unknown,
): boolean {
  const cookie = (request.headers.cookie ?? '')
    .split(';')
    .map((part) => part.trim().split('='))
    .find(([name]) => name === CSRF_COOKIE)?.[1];
  if (!cookie || typeof token !== 'string') return false;
  const expected = Buffer.from(csrfToken(masterKey, transactionId, cookie));
  const given = Buffer.from(token);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** The merchant's return address with the outcome added as query parameters. */
export function merchantReturnUrl(row: TransactionRow): string | undefined {
  if (!row.merchantRedirectUrl) return undefined;
  const url = new URL(row.merchantRedirectUrl);
  url.searchParams.set('transaction_id', row.id);
  if (row.orderId) url.searchParams.set('order_id', row.orderId);
  url.searchParams.set('status', row.status);
  return url.toString();
}

export function sendPage(
  reply: FastifyReply,
  page: { html: string; csp: string },
  status = 200,
): FastifyReply {
  return reply
    .status(status)
    .header('content-security-policy', page.csp)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .type('text/html; charset=utf-8')
    .send(page.html);
}

/** A form that came back without its CSRF token, or with a value the page never offered. */
export function expiredPage(reply: FastifyReply): FastifyReply {
  return sendPage(
    reply,
    renderPage({
      title: 'Session expired',
      body: '<h1>This page has expired</h1><p>Reload the page and try again.</p>',
    }),
    403,
  );
}

/** A form whose value the service cannot act on: what is wrong, and the way back to the page. */
export function formErrorPage(reply: FastifyReply, message: string, back: string): FastifyReply {
  return sendPage(
    reply,
    renderPage({
      title: 'Check the form',
      body: `<h1>That did not go through</h1>
<p role="alert">${escapeHtml(message)}</p>
<div class="actions"><a class="button neutral" href="${escapeHtml(back)}">Back to the payment</a></div>`,
    }),
    422,
  );
}

export function notFoundPage(reply: FastifyReply): FastifyReply {
  return sendPage(reply, renderPage({ title: 'Not found', body: '<h1>Transaction not found</h1>' }), 404);
}

/** Shows where a transaction ended, with the way back to the merchant. */
export function finalStatePage(reply: FastifyReply, row: TransactionRow): FastifyReply {
  const back = merchantReturnUrl(row);
  return sendPage(
    reply,
    renderPage({
      title: 'Payment status',
      body: `<h1>Payment status</h1>
<p class="status ${escapeHtml(row.status)}">${escapeHtml(row.status)}</p>
<p>${escapeHtml(row.message)}</p>
${back ? `<div class="actions"><a class="button neutral" href="${escapeHtml(back)}">Return to the merchant</a></div>` : ''}`,
    }),
  );
}

export function originOf(url: string | null): string[] {
  if (!url) return [];
  try {
    return [new URL(url).origin];
  } catch {
    return [];
  }
}

/** Parses `application/x-www-form-urlencoded` bodies for the hosted pages' forms. */
export function parseForm(body: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(body));
}

/**
 * Where the customer goes from a hosted page: the next page the transaction waits on (3-D Secure, a
 * provider), the merchant once it is final, or the state while it is processed.
 */
export function sendOnward(reply: FastifyReply, row: TransactionRow): FastifyReply {
  if (row.status === 'REDIRECT' && row.redirectUrl) return reply.redirect(row.redirectUrl, 303);
  if (row.status === 'PENDING') {
    return sendPage(
      reply,
      renderPage({
        title: 'Processing the payment',
        refreshSeconds: 2,
        body: `<h1>Processing the payment</h1><p role="status">${escapeHtml(row.message)}</p>
<p class="note">This page refreshes by itself.</p>`,
      }),
    );
  }
  const back = merchantReturnUrl(row);
  return back ? reply.redirect(back, 303) : finalStatePage(reply, row);
}

/**
 * A refusal worded for the API ("The zip field is required.") as the form says it, by the label the
 * customer sees ("Postal code is required.").
 */
export function underLabel(message: string, label: string): string {
  return message.replace(/^The [a-z0-9 ]+ field\b/i, label.replace(/\s*\(.*\)$/, ''));
}
