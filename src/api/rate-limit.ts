import { sql } from 'drizzle-orm';
import type { Db } from '../db/client';

export interface RateLimitDecision {
  allowed: boolean;
  retryAfterSeconds: number;
}

/**
 * Token bucket kept in Postgres, so every API process draws from the same bucket: `ratePerSecond` tokens
 * flow in, at most `burst` are held, each request takes one.
 */
export async function takeToken(
  db: Db,
  key: string,
  ratePerSecond: number,
  burst: number,
): Promise<RateLimitDecision> {
  const refill = sql`least(${burst}::float8, rate_limit_buckets.tokens + extract(epoch from (now() - rate_limit_buckets.updated_at)) * ${ratePerSecond}::float8)`;
  const result = await db.execute<{ allowed: boolean; tokens: number }>(sql`
    insert into rate_limit_buckets (key, tokens, allowed, updated_at)
    values (${key}, ${burst - 1}::float8, true, now())
    on conflict (key) do update set
      allowed = ${refill} >= 1,
      tokens = case when ${refill} >= 1 then ${refill} - 1 else ${refill} end,
      updated_at = now()
    returning allowed, tokens`);
  const row = result.rows[0]!;
  return {
    allowed: row.allowed,
    retryAfterSeconds: row.allowed ? 0 : Math.max(1, Math.ceil((1 - Number(row.tokens)) / ratePerSecond)),
  };
}

/** Drops buckets idle for an hour; any process may run it. */
export async function pruneBuckets(db: Db): Promise<void> {
  await db.execute(sql`delete from rate_limit_buckets where updated_at < now() - interval '1 hour'`);
}
