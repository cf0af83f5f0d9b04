import type { FastifyInstance } from 'fastify';
import { errorCatalogue } from '../../platform/errors';
import { escapeHtml, renderPage } from '../pages/layout';
import { sendPage } from '../pages/hosted';
import { SANDBOX_CARD_TABLE, SANDBOX_PAYOUT_TABLE } from '../../sandbox/tables';

const endpoints: [string, string, string][] = [
  [
    'POST',
    '/api/v1/{mode}/crypto/currencies',
    'Crypto currencies and networks for a country and amount. Plain JSON {country, amount}.',
  ],
  ['POST', '/api/v1/{mode}/card', 'Card payment from raw card data. Encrypted envelope.'],
  [
    'POST',
    '/api/v1/{mode}/hosted/card',
    'Card payment whose card the customer types on our page: REDIRECT to it. Encrypted envelope.',
  ],
  [
    'POST',
    '/api/v1/{mode}/apm',
    'Payment by bank transfer or wallet, picked on our page: REDIRECT to it. Encrypted envelope.',
  ],
  ['GET', '/api/v1/payment-templates', "The key's mode's payment page templates."],
  [
    'POST',
    '/api/v1/payment-link',
    'A card payment link on a template: {payment_template_id, amount?, currency?, expiry_date?}. Plain or envelope.',
  ],
  [
    'POST',
    '/api/v1/crypto/payment-link',
    'A crypto link (ONRAMP, OFFRAMP, PAYIN) on a template: the ramp or payin it makes. Plain or envelope.',
  ],
  ['POST', '/api/v1/{mode}/payout', 'Card payout from a merchant wallet. Encrypted envelope.'],
  ['POST', '/api/v1/{mode}/crypto', 'Crypto ramp, ONRAMP or OFFRAMP. Encrypted envelope.'],
  ['POST', '/api/v1/{mode}/crypto/payin', 'Crypto payin. Encrypted envelope.'],
  ['GET', '/api/{mode}/status/{id}', 'A transaction by transaction_id, else by order_id.'],
  ['GET', '/api/v1/wallet', "The calling mode's wallets and available balances."],
  [
    'POST',
    '/api/v1/wallet/estimate-payout',
    'What a payout would take from a wallet: amount, fee, balance. Encrypted envelope.',
  ],
  ['GET', '/api/v1/{mode}/payout/{id}/status', 'A payout by transaction_id or order_id.'],
  [
    'POST',
    '/api/v1/{mode}/refund',
    'Full refund of a SUCCESS card payment or payin. Plain JSON {transaction_id, reason} or envelope.',
  ],
  [
    'POST',
    '/api/v1/test/chargeback',
    'Simulates a chargeback (test mode). Plain JSON {transaction_id} or envelope.',
  ],
  [
    'POST',
    '/api/v1/test/crypto/{id}/deposit',
    'Simulates a crypto deposit (test mode). Plain JSON {amount, tx_hash?}.',
  ],
  [
    'GET',
    '/api/v1/{test|live}-transactions',
    'Transactions, newest first, cursor-paged. Query: dates, status, transaction_type, order_id, limit.',
  ],
  [
    'GET',
    '/api/v1/{test|live}-wallet-transactions',
    'Wallet ledger entries, cursor-paged. Query: dates, transaction_type (ledger step), wallet_id.',
  ],
  [
    'GET',
    '/api/v1/{mode}/webhooks/events',
    'Webhook events with every delivery attempt. Query: transaction_id, delivered, dates.',
  ],
  ['POST', '/api/v1/{mode}/webhooks/events/{event_id}/redeliver', 'Sends one webhook event again now.'],
  ['GET', '/healthz, /readyz', 'Process up; Postgres and Temporal reachable.'],
];

const rows = (items: string[][]) =>
  items.map((cells) => `<tr>${cells.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`).join('');

/** A one-page API reference, served by the service itself. */
export async function docsRoutes(app: FastifyInstance): Promise<void> {
  const page = renderPage({
    title: 'Payments API',
    body: `<h1>Payments API</h1>
<p>Every merchant call carries <code>Authorization: Bearer &lt;secret key&gt;</code>; <code>PA_TEST_</code> keys work on
<code>test</code> paths, <code>PA_LIVE_</code> keys on <code>live</code> paths.</p>
<p>Encrypted endpoints take <code>{"payload": "&lt;iv hex&gt;:&lt;ciphertext hex&gt;"}</code>: the JSON fields encrypted with
AES-256-CBC (PKCS#7), a fresh 16-byte IV, and the UTF-8 bytes of the merchant's 32-character encryption key.</p>
<h2>Endpoints</h2><table>${rows(endpoints)}</table>
<h2>Errors</h2><p>Every error body has a <code>message</code>; validation errors add <code>errors</code>, each failing field with its messages.</p>
<table>${rows(
      Object.entries(errorCatalogue).map(([code, e]) => [
        String(e.status),
        code === 'VALIDATION'
          ? "The first failing field's message, e.g. The amount field is required."
          : e.message,
      ]),
    )}</table>
<h2>Sandbox cards</h2><table>${rows(SANDBOX_CARD_TABLE)}</table>
<h2>Sandbox payout cards</h2><table>${rows(SANDBOX_PAYOUT_TABLE)}</table>
<h2>Webhooks</h2><p>Sent on every final status, refund and chargeback: the status body plus <code>event_id</code>, signed in
<code>fs-webhook-hash</code> (hex HMAC-SHA256 of the body) and <code>webhook-signature</code> (<code>v1,</code> + base64
HMAC-SHA256 of <code>webhook-id.webhook-timestamp.body</code>), keyed with the webhook secret. Retried for up to three days.</p>`,
  });
  app.get('/docs', async (_request, reply) => sendPage(reply, page));
}
