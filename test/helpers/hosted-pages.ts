import type { FastifyInstance } from 'fastify';
import type { startWebhookReceiver } from './webhook-receiver';

/** A card request without the card: what hosted payments (card page, APM) are created with. */
export function withoutCard(request: Record<string, unknown>): Record<string, unknown> {
  const {
    card_number: _number,
    card_expiry_month: _month,
    card_expiry_year: _year,
    card_cvv: _cvv,
    ...rest
  } = request;
  return rest;
}

/** A hosted page opened as a browser opens it: its form's CSRF token and the cookie it is bound to. */
export async function openForm(app: FastifyInstance, url: string) {
  const path = new URL(url, 'http://x').pathname;
  const page = await app.inject({ url: path });
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1];
  return { path, page, csrf, cookie: String(page.headers['set-cookie']).split(';')[0]! };
}

/** Posts a form opened with `openForm`, as a browser without JavaScript posts it. */
export function postOpenedForm(
  app: FastifyInstance,
  opened: Awaited<ReturnType<typeof openForm>>,
  fields: Record<string, string>,
) {
  return app.inject({
    method: 'POST',
    url: opened.path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: opened.cookie },
    payload: new URLSearchParams({ csrf: opened.csrf ?? '', ...fields }).toString(),
  });
}

/** Opens a hosted page and submits its form with these fields. */
export async function submitForm(app: FastifyInstance, url: string, fields: Record<string, string>) {
  return postOpenedForm(app, await openForm(app, url), fields);
}

/** The first webhook the receiver got for a transaction, waiting for it up to 30 s. */
export async function webhookFor(
  receiver: Awaited<ReturnType<typeof startWebhookReceiver>>,
  transactionId: string,
) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = receiver.received.find(
      (w) => (w.json.data as { transaction_id?: string } | undefined)?.transaction_id === transactionId,
    );
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no webhook for ${transactionId}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
