import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { runCliIn } from '../helpers/cli';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver } from '../helpers/webhook-receiver';

let env: TestEnv;
let alice: MerchantClient;
let bob: MerchantClient;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  // The retry after a failed first attempt waits ten minutes: within a test, only a redelivery delivers.
  env = await startTestEnv({ WEBHOOK_RETRY_SCHEDULE_SECONDS: '600', WEBHOOK_RETRY_WINDOW_SECONDS: '3600' });
  alice = merchantClient(env.app, await env.createMerchant());
  bob = merchantClient(env.app, await env.createMerchant());
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await env?.close();
});

type EventLog = {
  data: {
    event_id: string;
    transaction_id: string;
    status: string;
    created_at: string;
    delivered: boolean;
    attempts: {
      attempted_at: string;
      http_status: number | null;
      latency_ms: number;
      error: string | null;
    }[];
  }[];
  meta: { hasNextPage: boolean; nextCursor?: string; totalCount: number };
};
const log = async (client: MerchantClient, query = '') =>
  (await client.get(`/api/v1/test/webhooks/events?${query}`)).json() as EventLog;

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('GET /api/v1/{mode}/webhooks/events', () => {
  it('lists each event with every delivery attempt, filters on delivered, and redelivers one now', async () => {
    receiver.answerWith(503);
    const created = await alice.post('/api/v1/test/card', cardRequest({ webhook_url: receiver.url }));
    const id = created.json().data.transaction_id;
    // The first attempt fails; while the endpoint is down the event is not delivered.
    const failing = await until(
      () => log(alice, `transaction_id=${id}`),
      (page) => (page.data[0]?.attempts.length ?? 0) >= 1,
    );
    expect(failing.data).toHaveLength(1);
    const [event] = failing.data;
    expect(event).toMatchObject({
      transaction_id: id,
      event_type: 'status',
      status: 'SUCCESS',
      delivered: false,
    });
    expect(event!.attempts[0]).toMatchObject({ http_status: 503, error: expect.any(String) });
    expect(event!.attempts[0]!.latency_ms).toBeGreaterThanOrEqual(0);
    expect((await log(alice, `transaction_id=${id}&delivered=false`)).data).toHaveLength(1);
    expect((await log(alice, `transaction_id=${id}&delivered=true`)).data).toHaveLength(0);

    receiver.answerWith(200);
    // Asked twice at once: both answer, and the run they share delivers the event.
    const [redelivered, again] = await Promise.all(
      [1, 2].map(() => alice.postPlain(`/api/v1/test/webhooks/events/${event!.event_id}/redeliver`, {})),
    );
    expect(redelivered!.statusCode).toBe(200);
    expect(again!.statusCode).toBe(200);
    expect(redelivered!.json().data.event_id).toBe(event!.event_id);
    const delivered = await until(
      () => log(alice, `transaction_id=${id}&delivered=true`),
      (page) => page.data.length === 1,
    );
    const attempts = delivered.data[0]!.attempts;
    expect(attempts.at(-1)).toMatchObject({ http_status: 200, error: null });
    expect(receiver.received.some((w) => w.json.event_id === event!.event_id)).toBe(true);
  });

  it("shows one merchant nothing of another's events, by list or by redelivery", async () => {
    await alice.post('/api/v1/test/card', cardRequest({ webhook_url: receiver.url }));
    const alices = await until(
      () => log(alice),
      (page) => page.data.length >= 2,
    );
    for (const day of ['2026-02-30', '0000-01-01'])
      expect((await alice.get(`/api/v1/test/webhooks/events?transaction_end_date=${day}`)).statusCode).toBe(
        422,
      );
    const theirs = await log(bob);
    expect(theirs.meta.totalCount).toBe(0);
    const stolen = await bob.postPlain(
      `/api/v1/test/webhooks/events/${alices.data[0]!.event_id}/redeliver`,
      {},
    );
    expect(stolen.statusCode).toBe(404);
    expect(stolen.json().message).toBe('Webhook event not found.');
    const live = await alice.get('/api/v1/live/webhooks/events', { key: alice.key('live') });
    expect(live.json().meta.totalCount).toBe(0);
  });

  it('pages newest first and is in the CLI', async () => {
    const page = await log(alice, 'limit=1');
    expect(page.data).toHaveLength(1);
    expect(page.meta.hasNextPage).toBe(true);
    const next = await log(alice, `limit=1&nextCursor=${encodeURIComponent(page.meta.nextCursor!)}`);
    expect(next.data[0]!.created_at <= page.data[0]!.created_at).toBe(true);
    expect(next.data[0]!.event_id).not.toBe(page.data[0]!.event_id);
    expect((await alice.get('/api/v1/test/webhooks/events?delivered=maybe')).statusCode).toBe(422);

    const cli = await runCliIn(
      env,
      'webhooks',
      'events',
      '--merchant',
      alice.credentials.merchant_id,
      '--mode',
      'test',
      '--json',
    );
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout).map((e: { event_id: string }) => e.event_id)).toContain(
      page.data[0]!.event_id,
    );
  });
});
