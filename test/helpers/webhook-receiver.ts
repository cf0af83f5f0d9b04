import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';

export interface ReceivedWebhook {
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: Record<string, unknown>;
}

/**
 * A merchant's webhook endpoint on loopback that records what it gets and answers 200, or the status
 * set with `answerWith` (an endpoint that is down).
 */
export async function startWebhookReceiver(): Promise<{
  url: string;
  received: ReceivedWebhook[];
  answerWith(status: number): void;
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}> {
  const received: ReceivedWebhook[] = [];
  let status = 200;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ headers: request.headers, body, json: JSON.parse(body) as Record<string, unknown> });
      response.statusCode = status;
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    answerWith(next) {
      status = next;
    },
    async waitFor(count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} webhooks, got ${received.length}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return received;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Checks both signatures the way a merchant would, from the raw body and the webhook secret: the body's
 * hash, and any of the space-separated `webhook-signature` entries (several during a key rotation).
 */
export function verifyWebhook(
  webhook: ReceivedWebhook,
  secret: string,
): { hash: boolean; signature: boolean } {
  const hash = createHmac('sha256', secret).update(webhook.body).digest('hex');
  const id = String(webhook.headers['webhook-id']);
  const timestamp = String(webhook.headers['webhook-timestamp']);
  const expected = createHmac('sha256', secret).update(`${id}.${timestamp}.${webhook.body}`).digest('base64');
  const given = String(webhook.headers['webhook-signature'])
    .split(' ')
    .map((entry) => entry.replace(/^v1,/, ''));
  return {
    hash: hash === webhook.headers['fs-webhook-hash'],
    signature: given.some(
      (one) => one.length === expected.length && timingSafeEqual(Buffer.from(one), Buffer.from(expected)),
    ),
  };
}
