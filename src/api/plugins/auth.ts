import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/errors';
import { findMerchantBySecretKey, type AuthenticatedMerchant } from '../../merchants/keys';
import { hashSecretKey } from '../../ciphers/keys';
import { isMode } from '../../lib/vocabulary';
import type { Db } from '../../db/client';
import { takeToken } from '../rate-limit';
import { TtlCache } from '../../lib/ttl-cache';

declare module 'fastify' {
  interface FastifyRequest {
    merchant: AuthenticatedMerchant;
  }
}

export interface AuthOptions {
  db: Db;
  ratePerSecond: number;
  burst: number;
}

/** Reads the bearer key, spends one rate-limit token for it, then finds its merchant and mode. */
export function authenticate(options: AuthOptions) {
  // Short-lived, so a key retired by rotation stops working within seconds on every process.
  const cache = new TtlCache<string, AuthenticatedMerchant | null>(5_000, 10_000);
  return async function authenticateHook(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const pathMode = (request.params as { mode?: string }).mode;
    if (pathMode !== undefined && !isMode(pathMode)) throw new ApiError('ROUTE_NOT_FOUND');
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!header || !match || match[1]!.length === 0) throw new ApiError('AUTH_MISSING');
    const key = match[1]!;
    const keyHash = hashSecretKey(key);
    const decision = await takeToken(options.db, `key:${keyHash}`, options.ratePerSecond, options.burst);
    if (!decision.allowed)
      throw new ApiError('RATE_LIMITED', undefined, { retryAfterSeconds: decision.retryAfterSeconds });
    let merchant = cache.get(keyHash);
    if (merchant === undefined) {
      merchant = (await findMerchantBySecretKey(options.db, key)) ?? null;
      cache.set(keyHash, merchant);
    }
    if (!merchant) throw new ApiError('AUTH_INVALID');
    if (pathMode !== undefined && merchant.mode !== pathMode) throw new ApiError('AUTH_INVALID');
    request.merchant = merchant;
  };
}
