import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Headers of a webhook delivery (docs/webhooks.md): `fs-webhook-hash` over the raw body, and the
 * Standard Webhooks trio over `id.timestamp.body`, keyed with the UTF-8 bytes of the webhook secret. During
 * a rotation's overlap there are several secrets (newest first): `webhook-signature` carries one signature
 * per secret, space-separated as Standard Webhooks has it, so a receiver holding either verifies;
 * `fs-webhook-hash`, which holds one, is keyed with the oldest (what receivers verified with before the
 * rotation) until the overlap ends.
 */
export function webhookHeaders(
  body: string,
  secrets: string | readonly string[],
  eventId: string,
  timestampSeconds: number,
) {
  const keys = typeof secrets === 'string' ? [secrets] : secrets;
  if (keys.length === 0) throw new Error(`no webhook secret to sign event ${eventId} with`);
  const hash = createHmac('sha256', keys.at(-1)!).update(body, 'utf8').digest('hex');
  const signatures = keys.map(
    (secret) =>
      `v1,${createHmac('sha256', secret).update(`${eventId}.${timestampSeconds}.${body}`, 'utf8').digest('base64')}`,
  );
  return {
    'content-type': 'application/json',
    'fs-webhook-hash': hash,
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signatures.join(' '),
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

/**
 * Checks a received webhook over its raw body, in constant time, as a merchant's endpoint should. `secrets`:
 * the secret, or every one the receiver holds during a rotation; a signature or hash by any of them passes.
 */
export function verifyWebhook(
  body: string,
  headers: { id: string; timestamp: string; signature: string; hash?: string | undefined },
  secrets: string | readonly string[],
  options: { toleranceSeconds?: number; nowSeconds?: number } = {},
): WebhookCheck {
  const timestamp = Number(headers.timestamp);
  const now = options.nowSeconds ?? Date.now() / 1000;
  const same = (given: string, wanted: string) =>
    given.length === wanted.length && timingSafeEqual(Buffer.from(given), Buffer.from(wanted));
  const given = headers.signature.split(' ').filter(Boolean);
  const expected = (typeof secrets === 'string' ? [secrets] : secrets).map((secret) =>
    webhookHeaders(body, secret, headers.id, timestamp),
  );
  return {
    signature:
      Number.isFinite(timestamp) &&
      expected.some((e) => given.some((signature) => same(signature, e['webhook-signature']))),
    hash: headers.hash === undefined || expected.some((e) => same(headers.hash!, e['fs-webhook-hash'])),
    fresh: Number.isFinite(timestamp) && Math.abs(now - timestamp) <= (options.toleranceSeconds ?? 300),
  };
}
