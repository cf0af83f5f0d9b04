import type { FastifyInstance } from 'fastify';
import type { startWebhookReceiver } from './webhook-receiver';
import { openHostedPage } from './hosted-form';
import type { HostedPaymentRequest } from '../../src/client/index';

/**
 * A card request without the card: what hosted payments (card page, APM) are created with. Typed as the
 * client's request: what `cardRequest` builds is complete, whatever a test overrides in it.
 */
export function withoutCard(request: Record<string, unknown>): HostedPaymentRequest {
  const {
    card_number: _number,
    card_expiry_month: _month,
    card_expiry_year: _year,
    card_cvv: _cvv,
    ...rest
  } = request;
  return rest as HostedPaymentRequest;
}

/** A hosted page opened by its full URL (as a create answers it), through `openHostedPage`. */
export async function openForm(app: FastifyInstance, url: string) {
  const path = new URL(url, 'http://x').pathname;
  return { path, ...(await openHostedPage(app, path)) };
}

/** Posts a form opened with `openForm`, as a browser without JavaScript posts it. */
export function postOpenedForm(
  _app: FastifyInstance,
  opened: Awaited<ReturnType<typeof openForm>>,
  fields: Record<string, string>,
) {
  return opened.submit(fields);
}

/** Opens a hosted page and submits its form with these fields. */
export async function submitForm(app: FastifyInstance, url: string, fields: Record<string, string>) {
  return (await openForm(app, url)).submit(fields);
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
