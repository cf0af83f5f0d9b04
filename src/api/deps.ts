import type { Resolver } from '../net/address-policy';
import type { Client } from '@temporalio/client';
import type { Config } from '../platform/config';
import type { Db } from '../db/client';
import type { Logger } from '../platform/log';
import type { RateSource } from '../coins/rates';
import type { TransactionDeps } from '../transactions/deps';
import type { EdgeServices, TokenBuckets } from './services';

/** What the HTTP layer is built from. */
export interface AppDeps {
  config: Config;
  db: Db;
  temporal: Client;
  log?: Logger;
  /** Prices for crypto quotes; the sandbox reads the catalogue. */
  rates?: RateSource;
  /** Resolves merchant host names when URLs are checked; the system resolver unless a test replaces it. */
  resolve?: Resolver;
  /** True once the process is shutting down: `/readyz` answers 503 and connections are not kept alive. */
  draining?: () => boolean;
  /** A server span per request (TRACING on; src/platform/tracing.ts installs the exporter). */
  tracing?: boolean;
  /** More Prometheus text for `/metrics`: the worker's, when this process runs one too (`ROLE=all`). */
  extraMetrics?: () => Promise<string>;
  /** Replaces some of the domain services the merchant API calls (test/edge runs it on its own). */
  services?: Partial<EdgeServices>;
}

/** What merchant routes use: the storage and Temporal handles, and the transaction services' own bag. */
export interface RouteDeps {
  config: Config;
  db: Db;
  temporal: Client;
  transactions: TransactionDeps;
  /** What each route calls below the edge (src/api/services.ts). */
  services: EdgeServices;
  /** See AppDeps. */
  draining?: () => boolean;
}

/** What the hosted pages use. */
export interface PageDeps {
  db: Db;
  temporal: Client;
  masterKey: string;
  /** Per client address, shared by every API process. */
  pageLimiter: TokenBuckets;
  /** Mark cookies Secure: the public address is https. */
  secureCookies: boolean;
  /** How long a card typed on the hosted payment page may wait in the vault. */
  cardHoldSeconds: number;
  /** The transaction services, for pages that create a transaction (payment links). */
  transactions: TransactionDeps;
  /** The domain's reads and submissions, as the routes get them (src/api/services.ts). */
  services: EdgeServices;
  log?: Logger;
}
