import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createDatabase, type Database } from '../../src/db/client';
import { createActivities, type ActivityDeps } from '../../activities/index';
import { payloadCodec } from '../../src/temporal/client';
import { createMerchant, SANDBOX_TERMINALS, type MerchantCredentials } from '../../src/merchants';
import type { Config } from '../../src/config';
import { createTestDatabase, testConfig } from './env';
import { allSearchAttributes } from '../../src/temporal/contracts';
import proto from '@temporalio/proto';

const { temporal } = proto;

export interface TimeSkippingEnv {
  env: TestWorkflowEnvironment;
  config: Config;
  database: Database;
  taskQueue: string;
  createMerchant(): Promise<MerchantCredentials>;
  /** Runs `fn`; a worker with the real activities polls the task queue for the whole file. */
  withWorker<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * The Java time-skipping test server with a worker running the real workflows and real activities
 * against a fresh test database. Timers are skipped whenever a test awaits a workflow result.
 */
export async function startTimeSkipping(
  overrides: Record<string, string> = {},
  activityOverrides: Partial<ActivityDeps> = {},
): Promise<TimeSkippingEnv> {
  const path = inject('testServerPath');
  if (!path) throw new Error('TEMPORAL_TEST_SERVER_PATH is not set: run the tests with `npm test`.');
  const testDb = await createTestDatabase();
  const taskQueue = `ts-${randomBytes(6).toString('hex')}`;
  const config = testConfig({ DATABASE_URL: testDb.url, TEMPORAL_TASK_QUEUE: taskQueue, ...overrides });
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path } },
    client: { dataConverter: { payloadCodecs: [payloadCodec(config)] } },
  });
  await registerSearchAttributes(env);
  const database = createDatabase(config.DATABASE_URL, 5);
  // One worker for the whole file: a worker stopped mid-file would strand workflow tasks on its sticky queue.
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities: createActivities({ db: database.db, config, ...activityOverrides }),
    dataConverter: { payloadCodecs: [payloadCodec(config)] },
  });
  const running = worker.run();
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
      }),
    withWorker: (fn) => fn(),
    async close() {
      worker.shutdown();
      await running;
      await env.teardown();
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
