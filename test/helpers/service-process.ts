import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { createDatabase } from '../../src/db/client';
import { createMerchant, type MerchantCredentials } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';
import { freePorts, SERVICE_COMMAND, ServiceProcess, waitReady } from '../faults/harness';
import { createTestDatabase } from './env';

/**
 * The whole service (`ROLE=all`) in a process of its own, on the suite's Temporal server, with a database
 * of its own and one sandbox merchant; `env` adds to or overrides its settings. Stopped, and its database
 * dropped, by `cleanups` (the file's `cleanUpAfterAll`).
 */
export async function startServiceProcess(
  name: string,
  env: NodeJS.ProcessEnv,
  cleanups: { push(...cleanups: (() => Promise<unknown>)[]): void },
): Promise<{ baseUrl: string; merchant: MerchantCredentials; service: ServiceProcess }> {
  const database = await createTestDatabase();
  cleanups.push(() => database.drop());
  const masterKey = randomBytes(32).toString('hex');
  const setup = createDatabase(database.url, 1);
  const merchant = await createMerchant(setup.db, masterKey, {
    name: `${name} merchant`,
    wallets: [{ currency: 'USD', amount: 0n }],
    terminals: SANDBOX_TERMINALS,
  });
  await setup.close();

  const [port, metricsPort] = await freePorts(2);
  const baseUrl = `http://127.0.0.1:${port}`;
  const tag = name.replace(/\W+/g, '-');
  const service = new ServiceProcess(`${name} service`, SERVICE_COMMAND, {
    ...process.env,
    ROLE: 'all',
    LOG_LEVEL: 'warn',
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: `${tag}-${randomBytes(4).toString('hex')}`,
    MASTER_KEY: masterKey,
    PAYLOAD_KEYS: `${tag}:${randomBytes(32).toString('hex')}`,
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    BASE_URL: baseUrl,
    SHUTDOWN_DRAIN_SECONDS: '0',
    ...env,
  });
  cleanups.push(() => service.stop());
  service.start();
  await waitReady(baseUrl, service);
  return { baseUrl, merchant, service };
}
