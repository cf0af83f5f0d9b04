import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Headers of a webhook delivery (docs/webhooks.md): `fs-webhook-hash` over the raw body, and the
 * Standard Webhooks trio over `id.timestamp.body`, both keyed with the UTF-8 bytes of the webhook secret.
 */
export function webhookHeaders(body: string, secret: string, eventId: string, timestampSeconds: number) {
  const hash = createHmac('sha256', secret).update(body, 'utf8').digest('hex');
  const signature = createHmac('sha256', secret)
    .update(`${eventId}.${timestampSeconds}.${body}`, 'utf8')
    .digest('base64');
  return {
    'content-type': 'application/json',
    'fs-webhook-hash': hash,
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}

/** What a received webhook's headers prove (docs/webhooks.md), each part on its own. */
export interface WebhookCheck {
  /** `webhook-signature` is ours over `webhook-id.webhook-timestamp.body`. */
  signature: boolean;
  /** `fs-webhook-hash` is ours over the body (true when the header is absent and not asked for). */
  hash: boolean;
  /** `webhook-timestamp` is within the tolerance of now: not a replay of an old delivery. */
  fresh: boolean;
}

/** Checks a received webhook over its raw body, in constant time, as a merchant's endpoint should. */
export function verifyWebhook(
  body: string,
  headers: { id: string; timestamp: string; signature: string; hash?: string | undefined },
  secret: string,
  options: { toleranceSeconds?: number; nowSeconds?: number } = {},
): WebhookCheck {
  const timestamp = Number(headers.timestamp);
  const expected = webhookHeaders(body, secret, headers.id, timestamp);
  const now = options.nowSeconds ?? Date.now() / 1000;
  const same = (given: string, wanted: string) =>
    given.length === wanted.length && timingSafeEqual(Buffer.from(given), Buffer.from(wanted));
  return {
    signature: Number.isFinite(timestamp) && same(headers.signature, expected['webhook-signature']),
    hash: headers.hash === undefined || same(headers.hash, expected['fs-webhook-hash']),
    fresh: Number.isFinite(timestamp) && Math.abs(now - timestamp) <= (options.toleranceSeconds ?? 300),
  };
}
