import { createHmac } from 'node:crypto';

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
