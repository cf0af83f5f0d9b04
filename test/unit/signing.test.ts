import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { webhookHeaders } from '../../src/webhooks/signing';

describe('webhook signatures', () => {
  it.each([
    ['{"status":"SUCCESS"}', 'secret-one', 'evt_1', 1_700_000_000],
    ['{"a":1,"b":"é"}', 'K'.repeat(32), 'evt_abc', 1_800_000_123],
    ['', 'x', 'evt_empty', 0],
  ])('signs %j with both schemes', (body, secret, id, timestamp) => {
    const headers = webhookHeaders(body, secret, id, timestamp);
    expect(headers).toEqual({
      'content-type': 'application/json',
      'fs-webhook-hash': createHmac('sha256', Buffer.from(secret, 'utf8'))
        .update(Buffer.from(body, 'utf8'))
        .digest('hex'),
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': `v1,${createHmac('sha256', Buffer.from(secret, 'utf8'))
        .update(Buffer.from(`${id}.${timestamp}.${body}`, 'utf8'))
        .digest('base64')}`,
    });
  });

  it('matches a fixed vector', () => {
    const headers = webhookHeaders('{"status":"SUCCESS"}', 'whsec', 'evt_1', 1_700_000_000);
    expect(headers['fs-webhook-hash']).toBe(
      '5579effedfae71a29ff50f45ca9150e3fc66a00acb5a4a63562d38f8de8b0036',
    );
  });
});
