import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, inject } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/platform/config';
import { createDatabase, type Database } from '../../src/db/client';
import { buildApp, type AppDeps } from '../../src/api/app';
import { loggerOptions } from '../../src/platform/log';
import { createActivities, type ActivityDeps } from '../../activities/index';
import { dataConverter, serviceClientOptions } from '../../src/temporal/client';
import { testClientOptions } from './update-key';
import { createMerchant, type MerchantCredentials } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';
import { withDatabase } from './global-setup';

export interface TestEnv {
  config: Config;
  database: Database;
  app: FastifyInstance;
  client: Client;
  worker: Worker;
  /** Every log line the API and activities wrote, for checking what never reaches logs. */
  logs: string[];
  createMerchant(options?: {
    name?: string;
    wallets?: { currency: string; amount: bigint }[];
  }): Promise<MerchantCredentials>;
  stopWorker(): Promise<void>;
  startWorker(): Promise<void>;
  close(): Promise<void>;
}

/** A fresh database copied from the migrated template. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const adminUrl = inject('adminDatabaseUrl');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name} template ${inject('templateDatabase')}`);
  await admin.end();
  return {
    url: withDatabase(adminUrl, name),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

/**
 * A fresh database for the test file that calls it (at its top level), opened before its tests and
 * dropped after them: for tests of the domain and the activities that need no Temporal. Answers a getter.
 */
export function databaseForFile(poolSize = 8): () => Database {
  let testDb: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let database: Database | undefined;
  beforeAll(async () => {
    testDb = await createTestDatabase();
    database = createDatabase(testDb.url, poolSize);
  });
  afterAll(async () => {
    await database?.close();
    await testDb?.drop();
  });
  return () => database!;
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: 'postgres://unused',
    MASTER_KEY: randomBytes(32).toString('hex'),
    PAYLOAD_KEYS: `test1:${randomBytes(32).toString('hex')}`,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: `test-${randomBytes(6).toString('hex')}`,
    LOG_LEVEL: 'info',
    BASE_URL: 'http://payments.test',
    ALLOW_SANDBOX_IN_LIVE: 'true',
    SHUTDOWN_DRAIN_SECONDS: '0',
    ...overrides,
  });
}

/** Database, worker on its own task queue, and the Fastify app: the whole service for one test file. */
export async function startTestEnv(
  overrides: Record<string, string> = {},
  activityOverrides: Partial<ActivityDeps> = {},
  appOverrides: Partial<Pick<AppDeps, 'resolve' | 'rates'>> = {},
): Promise<TestEnv> {
  const testDb = await createTestDatabase();
  const config = testConfig({ DATABASE_URL: testDb.url, ...overrides });
  const database = createDatabase(config.DATABASE_URL, 5);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const log = pino(loggerOptions(config.LOG_LEVEL), sink);
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const client = new Client({
    connection,
    ...testClientOptions(serviceClientOptions(config), config.MASTER_KEY),
  });
  const nativeConnection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });

  // The suite's bundle; a config asking for workflow stack traces gets a worker made as the service makes
  // it (`createWorker`, which bundles them in).
  const makeWorker = async () =>
    config.WORKFLOW_STACK_TRACES
      ? (await import('../../src/process/worker')).createWorker({
          config,
          db: database.db,
          connection: nativeConnection,
          activityOverrides,
        })
      : Worker.create({
          connection: nativeConnection,
          taskQueue: config.TEMPORAL_TASK_QUEUE,
          workflowBundle: { codePath: inject('workflowBundlePath') },
          activities: createActivities({
            db: database.db,
            config,
            temporal: () => client,
            ...activityOverrides,
          }),
          dataConverter: dataConverter(config),
        });
  let worker = await makeWorker();
  let running: Promise<void> | undefined = worker.run();

  const app = await buildApp({ config, db: database.db, temporal: client, log, ...appOverrides });
  await app.ready();

  const env: TestEnv = {
    config,
    database,
    app,
    client,
    get worker() {
      return worker;
    },
    logs,
    createMerchant: (options = {}) =>
      createMerchant(database.db, config.MASTER_KEY, {
        name: options.name ?? 'Test merchant',
        wallets: options.wallets ?? [
          { currency: 'USD', amount: 1_000_000n },
          { currency: 'EUR', amount: 1_000_000n },
        ],
        terminals: SANDBOX_TERMINALS,
        liveSandbox: true,
      }),
    async stopWorker() {
      if (!running) return;
      worker.shutdown();
      await running;
      running = undefined;
    },
    async startWorker() {
      if (running) return;
      worker = await makeWorker();
      running = worker.run();
    },
    async close() {
      await app.close();
      await env.stopWorker();
      await nativeConnection.close();
      await connection.close();
      await database.close();
      await testDb.drop();
    },
  };
  return env;
}
