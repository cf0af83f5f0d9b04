/**
 * The fault suite (`npm run test:faults`), its first half: a bounded mixed load on loopback while the
 * harness injects one fault at a time into the API and worker processes and what they stand on, then checks
 * that nothing was lost or done twice. See docs/reliability.md.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDatabase, runMigrations } from '../../src/db/client';
import { createMerchant, type MerchantCredentials } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';
import { startEmbeddedPostgres, type LocalPostgres } from '../../src/dev/postgres';
import { startTemporalDevServer, type LocalTemporal } from '../../src/dev/temporal';
import { ensureSearchAttributes } from '../../src/temporal/search-attributes';
import {
  cleanUpAfterAll,
  CONCURRENCY,
  FaultyReceiver,
  freePorts,
  pause,
  ready,
  scratchDir,
  SERVICE_COMMAND,
  serviceSettings,
  ServiceProcess,
  TRANSACTIONS,
  until,
} from './harness';
import { LoadClient, loadMerchant, type Created } from './load';
import { depositsOf, expectClean, reconcileAll, report, runLoad, verify } from './verdict';

const cleanups = cleanUpAfterAll();
const scratch = () => scratchDir(cleanups);

/** Where a workflow stands and the events it went through, from the CLI: for the report of one not final. */
function workflowSummary(binary: string, address: string, workflowId: string): string {
  const cli = (...args: string[]) => {
    try {
      return execFileSync(binary, [...args, '--address', address, '-w', workflowId], { encoding: 'utf8' });
    } catch (error) {
      return `(${(error as Error).message})`;
    }
  };
  const described = cli('workflow', 'describe');
  let events = cli('workflow', 'show', '-o', 'json');
  try {
    const history = JSON.parse(events) as { events: { eventId: string; eventType: string }[] };
    events = history.events.map((e) => `${e.eventId} ${e.eventType}`).join(', ');
  } catch {
    // the error text as it is
  }
  return `${described}\n  events: ${events}`;
}

describe('fault suite: processes', () => {
  it('API and worker processes survive a worker kill, a Temporal restart, 20 s without Postgres and a failing webhook endpoint', async () => {
    const dir = scratch();
    const [pgPort, temporalPort, uiPort, apiPort, receiverPort, metricsPort] = await freePorts(6);
    const binary = process.env.TEMPORAL_CLI_PATH;
    if (!binary) throw new Error('TEMPORAL_CLI_PATH must be set: run through `npm run test:faults`.');

    const startPostgres = () =>
      startEmbeddedPostgres({ dir: join(dir, 'pg'), port: pgPort!, database: 'payments', persistent: true });
    const startTemporal = () =>
      startTemporalDevServer({
        binary,
        port: temporalPort!,
        uiPort: uiPort!,
        dbFile: join(dir, 'temporal.db'),
      });
    let postgres: LocalPostgres = await startPostgres();
    let temporal: LocalTemporal = await startTemporal();
    cleanups.push(async () => postgres.stop());
    cleanups.push(async () => temporal.stop());
    await ensureSearchAttributes(temporal.address, 'default');

    const masterKey = randomBytes(32).toString('hex');
    const database = createDatabase(postgres.url, 2);
    await runMigrations(database.pool);
    const credentials: MerchantCredentials = await createMerchant(database.db, masterKey, {
      name: 'Fault merchant',
      wallets: [{ currency: 'USD', amount: 100_000_000n }],
      terminals: SANDBOX_TERMINALS,
    });
    await database.close();

    const env = {
      ...process.env,
      NODE_ENV: 'production',
      ...serviceSettings,
      DATABASE_URL: postgres.url,
      TEMPORAL_ADDRESS: temporal.address,
      MASTER_KEY: masterKey,
      PAYLOAD_KEYS: `faults:${randomBytes(32).toString('hex')}`,
      HOST: '127.0.0.1',
      PORT: String(apiPort),
      BASE_URL: `http://127.0.0.1:${apiPort}`,
    };
    const api = new ServiceProcess('api', SERVICE_COMMAND, { ...env, ROLE: 'api' });
    // Its /metrics on a port of its own: the default (9464) may be another test's, beside this one.
    const worker = new ServiceProcess('worker', SERVICE_COMMAND, {
      ...env,
      ROLE: 'worker',
      METRICS_PORT: String(metricsPort),
    });
    cleanups.push(
      () => api.stop(),
      () => worker.stop(),
    );
    api.start();
    worker.start();
    const baseUrl = `http://127.0.0.1:${apiPort}`;
    await until('the API to be ready', ready(baseUrl), 90_000);

    const receiver = new FaultyReceiver(receiverPort!);
    await receiver.start();
    cleanups.push(() => receiver.close());
    const merchant = loadMerchant(credentials);
    const client = new LoadClient(() => baseUrl, merchant, receiver.url);
    const created: Created[] = [];
    let faultsRunning = true;
    // While faults run the load keeps a steady pace; afterwards it finishes as fast as it can.
    const load = runLoad(client, TRANSACTIONS, CONCURRENCY, created, () => pause(faultsRunning ? 300 : 0));

    const faults: string[] = [];
    await until('the load to be under way', async () => created.length >= 10, 120_000);
    const inject = async (name: string, fault: () => Promise<void>) => {
      await pause(2_000);
      faults.push(name);
      process.stdout.write(`[faults] ${name} (after ${created.length} transactions)\n`);
      await fault();
    };
    await inject('SIGKILL the worker, restart it after 3 s', async () => {
      await worker.kill();
      await pause(3_000);
      worker.start();
    });
    await inject('webhook endpoint answers 503 for 5 s', async () => {
      receiver.fault = 'http-503';
      await pause(5_000);
      receiver.fault = 'none';
    });
    await inject('webhook endpoint hangs past the delivery timeout for 5 s', async () => {
      receiver.fault = 'timeout';
      await pause(5_000);
      receiver.fault = 'none';
    });
    await inject('webhook endpoint refuses connections for 5 s', async () => {
      await receiver.close();
      await pause(5_000);
      await receiver.start();
    });
    await inject('restart the Temporal server (state kept in its database file)', async () => {
      await temporal.stop();
      temporal = await startTemporal();
      // The file is a write-ahead log's (src/dev/temporal.ts): SQLite's header says so in bytes 18 and 19.
      expect([...readFileSync(join(dir, 'temporal.db')).subarray(18, 20)]).toEqual([2, 2]);
    });
    await inject('stop Postgres for 20 s', async () => {
      await postgres.stop();
      await pause(20_000);
      postgres = await startPostgres();
    });
    faultsRunning = false;
    await load;

    const verdict = await verify(postgres.url, created, receiver, credentials.merchant_id);
    report('faults', 'processes and infrastructure', verdict, {
      faultsInjected: faults.length,
      requestRetries: client.retries,
      webhookAttempts: receiver.attempts,
    });
    for (const line of verdict.notFinal) {
      const id = line.split(' ')[0]!;
      // What the client was answered, what became of its deposits, and what the processes logged of it.
      const deposits = await depositsOf(postgres.url, id);
      const logged = [...api.log.split('\n'), ...worker.log.split('\n')].filter((l) => l.includes(id));
      process.stdout.write(
        `[faults] not final: ${line}\n  ${(client.trail.get(id) ?? []).join('\n  ')}\n` +
          `  deposits: ${JSON.stringify(deposits)}\n  logged:\n  ${logged.join('\n  ')}\n` +
          `  in Temporal:\n${workflowSummary(binary, temporal.address, id)}\n`,
      );
    }
    if (verdict.notFinal.length > 0) process.stdout.write(`${worker.log.slice(-4000)}\n`);
    expectClean(verdict);
    // Reconciliation finds the faults left no difference behind.
    expect(await reconcileAll(postgres.url, temporal.address, masterKey)).toEqual([]);
  }, 900_000);
});
