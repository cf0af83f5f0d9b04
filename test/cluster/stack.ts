/**
 * The production topology's backing services for `npm run test:cluster` and `npm run bench:capacity`: an
 * embedded PostgreSQL holding the service's database and a real Temporal server's, one merchant with the
 * sandbox terminals, and the environment every `ROLE=api` and `ROLE=worker` process of the stack runs with.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createDatabase, runMigrations } from '../../src/db/client';
import { startEmbeddedPostgres } from '../../src/dev/postgres';
import { createMerchant, type MerchantCredentials } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';
import { freePorts } from '../faults/harness';
import { startRealTemporal } from './temporal-server';

export interface ClusterStack {
  databaseUrl: string;
  credentials: MerchantCredentials;
  /** The environment of the service's processes; the caller adds `BASE_URL` and each role's own. */
  env: NodeJS.ProcessEnv;
  /** The Temporal server's process, for its CPU and memory. */
  temporalPid: () => number | undefined;
  /** The postmaster of the PostgreSQL the service and Temporal share, for its CPU with its backends'. */
  postgresPid: () => number | undefined;
  /** Where the server serves Go's pprof, when asked for. */
  pprofUrl?: string;
}

/** Starts the stack; `onStop` receives each thing's stop, in the order they started. */
export async function startClusterStack(
  onStop: (stop: () => Promise<unknown>) => void,
  options: { pprof?: boolean } = {},
): Promise<ClusterStack> {
  const server = process.env.TEMPORAL_SERVER_PATH;
  const sqlTool = process.env.TEMPORAL_SQL_TOOL_PATH;
  if (!server || !sqlTool)
    throw new Error('Run through `npm run test:cluster` or `npm run bench:capacity`: they build the server.');
  const dir = mkdtempSync(join(tmpdir(), 'payments-cluster-'));
  chmodSync(dir, 0o755); // embedded Postgres runs as its own user when we are root
  onStop(async () => rmSync(dir, { recursive: true, force: true }));

  const [pgPort, pprofPort] = await freePorts(2);
  const postgres = await startEmbeddedPostgres({
    dir: join(dir, 'pg'),
    port: pgPort!,
    database: 'postgres',
    persistent: true,
  });
  onStop(() => postgres.stop());
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  await admin.query('create database payments');
  await admin.end();
  const databaseUrl = postgres.url.replace(/\/postgres$/, '/payments');
  const masterKey = randomBytes(32).toString('hex');
  const database = createDatabase(databaseUrl, 2);
  await runMigrations(database.pool);
  const credentials = await createMerchant(database.db, masterKey, {
    name: 'Cluster merchant',
    wallets: [{ currency: 'USD', amount: 100_000_000n }],
    terminals: SANDBOX_TERMINALS,
  });
  await database.close();

  // Last, so that a caller's first request follows the Temporal set-up at once (the cluster test checks
  // that the search attributes are usable by it).
  const temporal = await startRealTemporal({
    server,
    sqlTool,
    dir: join(dir, 'temporal'),
    postgresUrl: postgres.url,
    ...(options.pprof ? { pprofPort } : {}),
  });
  onStop(() => temporal.stop());

  return {
    databaseUrl,
    credentials,
    temporalPid: () => temporal.server.pid,
    postgresPid: postgres.pid,
    ...(options.pprof ? { pprofUrl: `http://127.0.0.1:${pprofPort}/debug/pprof` } : {}),
    env: {
      ...process.env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      MASTER_KEY: masterKey,
      PAYLOAD_KEYS: `cluster:${randomBytes(32).toString('hex')}`,
      HOST: '127.0.0.1',
      SHUTDOWN_DRAIN_SECONDS: '0',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,2,3,5',
      RATE_LIMIT_PER_SECOND: '10000',
      RATE_LIMIT_BURST: '10000',
      PAGE_RATE_LIMIT_PER_SECOND: '10000',
      PAGE_RATE_LIMIT_BURST: '10000',
    },
  };
}
