import { sql } from 'drizzle-orm';
import type { Db } from '../db/client';

export interface RateLimitDecision {
  allowed: boolean;
  retryAfterSeconds: number;
}

export interface BucketSettings {
  ratePerSecond: number;
  burst: number;
}

/** Keys an API process remembers claimed tokens for; the oldest is forgotten first. */
const MAX_LOCAL_KEYS = 10_000;
/** How long claimed tokens stay usable in the process that claimed them. */
const CLAIM_TTL_MS = 1_000;

/**
 * Token buckets shared by every API process through Postgres, without a write per request. A process
 * claims a few tokens at a time from the key's bucket (one UPSERT) and spends them locally; only when
 * its claim is spent or a second old does it claim again. The bucket in Postgres is the one source, so
 * no key is ever let through more than `burst` plus what `ratePerSecond` refills. The tolerance goes the
 * other way: with P processes, up to P × `claimSize` claimed tokens may sit unused in other processes
 * for up to a second, so a key can be refused that much early. Claims are `burst / 20` tokens (1 to 50):
 * a small burst keeps the exact per-request behaviour.
 */
export class RateLimiter {
  private readonly local = new Map<string, { tokens: number; expires: number }>();
  private readonly claiming = new Map<string, Promise<RateLimitDecision>>();
  private readonly claimSize: number;

  constructor(
    private readonly db: Db,
    private readonly settings: BucketSettings,
  ) {
    this.claimSize = Math.max(1, Math.min(50, Math.floor(settings.burst / 20)));
  }

  async take(key: string): Promise<RateLimitDecision> {
    for (;;) {
      const held = this.local.get(key);
      if (held && held.tokens >= 1 && held.expires > Date.now()) {
        held.tokens -= 1;
        return { allowed: true, retryAfterSeconds: 0 };
      }
      // One claim at a time per key and process; the requests that waited on it share what it got.
      const inFlight = this.claiming.get(key);
      if (inFlight) {
        const claimed = await inFlight;
        if (!claimed.allowed) return claimed;
        continue;
      }
      const claim = this.claim(key).finally(() => this.claiming.delete(key));
      this.claiming.set(key, claim);
      const claimed = await claim;
      if (!claimed.allowed) return claimed;
    }
  }

  private async claim(key: string): Promise<RateLimitDecision> {
    const { ratePerSecond, burst } = this.settings;
    const size = this.claimSize;
    const refill = sql`least(${burst}::float8, rate_limit_buckets.tokens + extract(epoch from (now() - rate_limit_buckets.updated_at)) * ${ratePerSecond}::float8)`;
    const result = await this.db.execute<{ granted: number; tokens: number }>(sql`
      insert into rate_limit_buckets (key, tokens, allowed, granted, updated_at)
      values (${key}, ${burst - Math.min(size, burst)}::float8, true, ${Math.min(size, burst)}, now())
      on conflict (key) do update set
        granted = least(${size}, floor(${refill}))::int,
        tokens = ${refill} - least(${size}, floor(${refill})),
        allowed = ${refill} >= 1,
        updated_at = now()
      returning granted, tokens`);
    const row = result.rows[0]!;
    const granted = Number(row.granted);
    if (granted < 1) {
      const missing = 1 - Number(row.tokens);
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(missing / ratePerSecond)) };
    }
    this.local.delete(key);
    if (this.local.size >= MAX_LOCAL_KEYS) {
      const oldest = this.local.keys().next();
      if (!oldest.done) this.local.delete(oldest.value);
    }
    this.local.set(key, { tokens: granted, expires: Date.now() + CLAIM_TTL_MS });
    return { allowed: true, retryAfterSeconds: 0 };
  }
}

/**
 * A bucket per key kept in this process only, in bounded memory: for what needs no cross-process
 * accuracy, such as slowing down a client that keeps presenting unknown keys.
 */
export class LocalRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly settings: BucketSettings) {}

  take(key: string): RateLimitDecision {
    const { ratePerSecond, burst } = this.settings;
    const now = Date.now();
    const bucket = this.buckets.get(key) ?? { tokens: burst, at: now };
    const tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * ratePerSecond);
    this.buckets.delete(key);
    if (this.buckets.size >= MAX_LOCAL_KEYS) {
      const oldest = this.buckets.keys().next();
      if (!oldest.done) this.buckets.delete(oldest.value);
    }
    const allowed = tokens >= 1;
    this.buckets.set(key, { tokens: allowed ? tokens - 1 : tokens, at: now });
    return {
      allowed,
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / ratePerSecond)),
    };
  }
}

/** Drops buckets idle for an hour; any process may run it. */
export async function pruneBuckets(db: Db): Promise<void> {
  await db.execute(sql`delete from rate_limit_buckets where updated_at < now() - interval '1 hour'`);
}
