import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/errors';
import type { AuthenticatedMerchant } from '../../merchants/keys';
import { hashSecretKey } from '../../ciphers/keys';
import { isMode } from '../../lib/vocabulary';
import { LocalRateLimiter } from '../rate-limit';
import type { TokenBuckets } from '../services';
import { TtlCache } from '../../lib/ttl-cache';

declare module 'fastify' {
  interface FastifyRequest {
    merchant: AuthenticatedMerchant;
  }
}

export interface AuthOptions {
  /** The merchant and mode a secret key belongs to. */
  findMerchant: (key: string) => Promise<AuthenticatedMerchant | undefined>;
  /** Each key's request tokens, shared by every API process. */
  buckets: TokenBuckets;
  /** The per-process limit on requests with keys that match no merchant. */
  ratePerSecond: number;
  burst: number;
}

/**
 * Reads the bearer key and finds its merchant and mode, then spends one of the key's rate-limit tokens
 * (shared by every API process). A key that matches no merchant gets no bucket in Postgres, so random
 * keys cannot grow it; the client presenting them is slowed down in this process instead.
 */
export function authenticate(options: AuthOptions) {
  // Short-lived, so a key retired by rotation stops working within seconds on every process.
  const cache = new TtlCache<string, AuthenticatedMerchant | null>(5_000, 10_000);
  const unknownKeys = new LocalRateLimiter(options);
  return async function authenticateHook(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const pathMode = (request.params as { mode?: string }).mode;
    if (pathMode !== undefined && !isMode(pathMode)) throw new ApiError('ROUTE_NOT_FOUND');
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!header || !match || match[1]!.length === 0) throw new ApiError('AUTH_MISSING');
    const key = match[1]!;
    const keyHash = hashSecretKey(key);
    let merchant = cache.get(keyHash);
    if (merchant === undefined) {
      const refused = unknownKeys.take(`ip:${request.ip}`);
      if (!refused.allowed) throw rateLimited(refused.retryAfterSeconds);
      merchant = (await options.findMerchant(key)) ?? null;
      cache.set(keyHash, merchant);
    }
    if (!merchant) throw new ApiError('AUTH_INVALID');
    const decision = await options.buckets.take(`key:${keyHash}`);
    if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds);
    if (pathMode !== undefined && merchant.mode !== pathMode) throw new ApiError('AUTH_INVALID');
    request.merchant = merchant;
  };
}

const rateLimited = (retryAfterSeconds: number) =>
  new ApiError('RATE_LIMITED', undefined, { retryAfterSeconds });
