import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ClientOptions } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { createDatabase, type Database } from '../../src/db/client';
import { createActivities, type ActivityDeps } from '../../activities/index';
import { dataConverter, serviceClientOptions } from '../../src/temporal/client';
import { testClientOptions } from './update-key';
import { createMerchant, type MerchantCredentials } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';
import type { Config } from '../../src/platform/config';
import { createTestDatabase, testConfig } from './env';
import { freePort } from '../../src/dev/postgres';
import { waitForPort } from '../../src/dev/temporal';
import { allSearchAttributes } from '../../src/contracts';
import proto from '@temporalio/proto';

const { temporal } = proto;

export interface TimeSkippingEnv {
  env: TestWorkflowEnvironment;
  config: Config;
  database: Database;
  taskQueue: string;
  createMerchant(): Promise<MerchantCredentials>;
  /** Stops the worker and starts a fresh one with an empty workflow cache, as a deploy or a crash would. */
  restartWorker(): Promise<void>;
  close(): Promise<void>;
}

/** The SDK's own environment factory, which takes a server already running (private in its types). */
type EnvironmentFactory = {
  create(options: {
    server: { type: 'existing' };
    address: string;
    namespace: string;
    supportsTimeSkipping: true;
    client: ClientOptions;
  }): Promise<TestWorkflowEnvironment>;
};

/**
 * Starts the Java test server and connects a time-skipping environment to it. The SDK would start the
 * server itself, but gives the JVM five seconds to listen, which a 2-core machine busy with the rest of the
 * suite does not always grant (three tries in a row failed under the fault suite's start): here it has a
 * minute. Started as the SDK starts it, with only its port: `--enable-time-skipping` would skip time even
 * while nothing awaits a result (the SDK's client skips it only while a test awaits one). Answers the
 * environment and how to stop the server after the environment's teardown.
 */
async function startServer(
  path: string,
  client: ClientOptions,
): Promise<{ env: TestWorkflowEnvironment; stop(): Promise<void> }> {
  const port = await freePort();
  const server = spawn(path, [String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  server.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    await exited;
  };
  try {
    await waitForPort('127.0.0.1', port, 60_000, () => server.exitCode !== null);
    const env = await (TestWorkflowEnvironment as unknown as EnvironmentFactory).create({
      server: { type: 'existing' },
      address: `127.0.0.1:${port}`,
      namespace: 'default',
      supportsTimeSkipping: true,
      client,
    });
    return { env, stop };
  } catch (error) {
    await stop();
    throw new Error(`the Java test server did not start: ${String(error)}\n${output}`);
  }
}

/**
 * The Java time-skipping test server with a worker running the real workflows and real activities
 * against a fresh test database. Timers are skipped whenever a test awaits a workflow result.
 */
export async function startTimeSkipping(
  overrides: Record<string, string> = {},
  activityOverrides: Partial<ActivityDeps> | ((database: Database) => Partial<ActivityDeps>) = {},
  workerOptions: { maxCachedWorkflows?: number } = {},
): Promise<TimeSkippingEnv> {
  const path = inject('testServerPath');
  if (!path)
    throw new Error(
      'TEMPORAL_TEST_SERVER_PATH is not set: run the tests with `npm test`, or one file with `npm run test:file -- FILE`.',
    );
  const testDb = await createTestDatabase();
  const taskQueue = `ts-${randomBytes(6).toString('hex')}`;
  const config = testConfig({ DATABASE_URL: testDb.url, TEMPORAL_TASK_QUEUE: taskQueue, ...overrides });
  const { env, stop: stopServer } = await startServer(
    path,
    testClientOptions(serviceClientOptions(config), config.MASTER_KEY),
  );
  await registerSearchAttributes(env);
  const database = createDatabase(config.DATABASE_URL, 5);
  const overridden =
    typeof activityOverrides === 'function' ? activityOverrides(database) : activityOverrides;
  const makeWorker = () =>
    Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      activities: createActivities({ db: database.db, config, temporal: () => env.client, ...overridden }),
      dataConverter: dataConverter(config),
      ...workerOptions,
    });
  let worker = await makeWorker();
  let running = worker.run();
  return {
    env,
    config,
    database,
    taskQueue,
    createMerchant: () =>
      createMerchant(database.db, config.MASTER_KEY, {
        name: 'Time-skipping merchant',
        wallets: [
          { currency: 'USD', amount: 1_000_000n },
          { currency: 'EUR', amount: 1_000_000n },
        ],
        terminals: SANDBOX_TERMINALS,
        liveSandbox: true,
      }),
    async restartWorker() {
      worker.shutdown();
      await running;
      worker = await makeWorker();
      running = worker.run();
    },
    async close() {
      worker.shutdown();
      await running;
      await env.teardown();
      await stopServer();
      await database.close();
      await testDb.drop();
    },
  };
}

/** The test server knows no custom search attributes until told. */
async function registerSearchAttributes(env: TestWorkflowEnvironment): Promise<void> {
  const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(allSearchAttributes.map((key) => [key.name, keyword])),
  });
}
