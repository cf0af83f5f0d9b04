import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';

/** `/metrics`: the counters move with the requests, labelled by route template, never by id. */
let env: TestEnv;
let merchant: MerchantClient;

beforeAll(async () => {
  env = await startTestEnv({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '3' });
  merchant = merchantClient(env.app, await env.createMerchant());
});
afterAll(() => env?.close());

async function scrape(): Promise<string> {
  const answer = await env.app.inject({ url: '/metrics' });
  expect(answer.statusCode).toBe(200);
  expect(answer.headers['content-type']).toContain('text/plain');
  return answer.body;
}

/** The value of one series, 0 when it is not there yet. */
function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('GET /metrics', () => {
  it('counts requests by route template and status, creates by kind, and rate-limit refusals', async () => {
    const before = await scrape();
    const created = await merchant.post('/api/v1/test/card', cardRequest());
    expect(created.statusCode).toBe(200);
    const id = created.json().data.transaction_id as string;
    expect((await merchant.get(`/api/test/status/${id}`)).statusCode).toBe(200);
    // At 1 a second with bursts of 3, quick lookups soon meet a refusal.
    const statuses: number[] = [];
    while (statuses.length < 30 && !statuses.includes(429))
      statuses.push((await merchant.get(`/api/test/status/${id}`)).statusCode);
    expect(statuses).toContain(429);

    const after = await scrape();
    const status200 =
      'http_request_duration_seconds_count{method="GET",route="/api/:mode/status/:id",status_code="200"}';
    expect(value(after, status200)).toBeGreaterThan(value(before, status200));
    expect(value(after, 'payments_transactions_created_total{kind="card"}')).toBe(
      value(before, 'payments_transactions_created_total{kind="card"}') + 1,
    );
    expect(value(after, 'payments_rate_limited_total{scope="api"}')).toBeGreaterThanOrEqual(1);
    expect(after).not.toContain(id);
    expect(after).toContain('process_cpu_user_seconds_total');
  });
});
