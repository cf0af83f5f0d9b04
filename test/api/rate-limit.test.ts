import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client';
import { databaseForFile } from '../helpers/env';
import { LocalRateLimiter, RateLimiter } from '../../src/api/rate-limit';

const db = databaseForFile(8);

const allowedOf = (decisions: { allowed: boolean }[]) => decisions.filter((d) => d.allowed).length;

describe('the shared rate limiter', () => {
  it('lets no more than the burst through across processes, however many requests race', async () => {
    // Three "processes" (limiters over the same table), a burst of 100 and almost no refill.
    const settings = { ratePerSecond: 0.001, burst: 100 };
    const limiters = [1, 2, 3].map(() => new RateLimiter(db().db, settings));
    const decisions = await Promise.all(
      Array.from({ length: 300 }, (_, i) => limiters[i % 3]!.take('key:shared')),
    );
    const allowed = allowedOf(decisions);
    expect(allowed).toBeLessThanOrEqual(100);
    // The stated tolerance: at most 3 processes x a claim of 5 tokens left unused.
    expect(allowed).toBeGreaterThanOrEqual(100 - 3 * 5);
    const refused = decisions.find((d) => !d.allowed)!;
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it('writes Postgres once per claim, not once per request', async () => {
    let writes = 0;
    const counted = {
      execute: (query: Parameters<Database['db']['execute']>[0]) => {
        writes += 1;
        return db().db.execute(query);
      },
    } as unknown as Database['db'];
    const limiter = new RateLimiter(counted, { ratePerSecond: 1000, burst: 1000 });
    for (let i = 0; i < 200; i += 1) expect((await limiter.take('key:claims')).allowed).toBe(true);
    // Claims of 50 tokens: 4 writes for 200 requests.
    expect(writes).toBe(4);
  });

  it('keeps exact per-request accounting for a small burst', async () => {
    const a = new RateLimiter(db().db, { ratePerSecond: 0.001, burst: 3 });
    const b = new RateLimiter(db().db, { ratePerSecond: 0.001, burst: 3 });
    const order = [a, b, a, b, a];
    const decisions = [];
    for (const limiter of order) decisions.push(await limiter.take('key:small'));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
  });

  it('keeps a local limiter bounded in memory, whatever keys it is given', () => {
    const local = new LocalRateLimiter({ ratePerSecond: 1, burst: 2 });
    for (let i = 0; i < 50_000; i += 1) local.take(`ip:${i}`);
    expect((local as unknown as { buckets: Map<string, unknown> }).buckets.size).toBeLessThanOrEqual(10_000);
    expect([local.take('ip:x'), local.take('ip:x'), local.take('ip:x')].map((d) => d.allowed)).toEqual([
      true,
      true,
      false,
    ]);
  });
});
