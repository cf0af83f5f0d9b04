import type { FastifyInstance } from 'fastify';
import { buildApp, type AppDeps } from '../../src/api/app';
import { notConnected } from '../../src/api/document';
import type { EdgeServices, TokenBuckets } from '../../src/api/services';
import { loadConfig } from '../../src/platform/config';
import type { Mode } from '../../src/lib/vocabulary';

/** Fails the test the moment the edge reaches past its services: no database, no Temporal. */
const NOT_CONNECTED = notConnected('the edge reached a store it must not touch');

/** The merchants the edge knows: a secret key each, with its mode and its 32-character envelope key. */
export const EDGE_MERCHANTS = {
  sk_test_edge: { merchantId: 'mer_edge', mode: 'test' as Mode, envelopeKey: 'e'.repeat(32) },
  sk_live_edge: { merchantId: 'mer_edge', mode: 'live' as Mode, envelopeKey: 'e'.repeat(32) },
};

/** Every call an edge app made to a service, by name, with its arguments. */
export type Calls = Partial<Record<keyof EdgeServices, unknown[][]>>;

/** Lets every request through, or none (a limit spent). */
export function buckets(allowed: boolean): TokenBuckets {
  return { take: async () => ({ allowed, retryAfterSeconds: allowed ? 0 : 7 }) };
}

/**
 * The merchant API with its domain services replaced: the key and envelope lookups answer from
 * EDGE_MERCHANTS, the rate limit lets everything through, and each service a test passes answers as it
 * says. Any other service, or any touch of Postgres or Temporal, fails with a 500 the test sees.
 */
export async function edgeApp(
  services: Partial<EdgeServices> = {},
): Promise<{ app: FastifyInstance; calls: Calls }> {
  const calls: Calls = {};
  const counted = Object.fromEntries(
    Object.entries({
      findMerchantBySecretKey: async (_db: unknown, key: string) => {
        const merchant = EDGE_MERCHANTS[key as keyof typeof EDGE_MERCHANTS];
        return merchant ? { merchantId: merchant.merchantId, mode: merchant.mode } : undefined;
      },
      merchantEncryptionKeys: async () => [EDGE_MERCHANTS.sk_test_edge.envelopeKey],
      tokenBuckets: () => buckets(true),
      ...services,
    }).map(([name, service]) => [
      name,
      (...args: unknown[]) => {
        (calls[name as keyof EdgeServices] ??= []).push(args);
        return (service as (...args: unknown[]) => unknown)(...args);
      },
    ]),
  ) as Partial<EdgeServices>;
  const config = loadConfig({
    DATABASE_URL: 'postgres://not-connected',
    MASTER_KEY: '0'.repeat(64),
    PAYLOAD_KEYS: `edge:${'0'.repeat(64)}`,
    LOG_LEVEL: 'silent',
    BASE_URL: 'https://payments.example',
  });
  const deps = { config, db: NOT_CONNECTED, temporal: NOT_CONNECTED, services: counted } as AppDeps;
  const app = await buildApp(deps);
  await app.ready();
  return { app, calls };
}
