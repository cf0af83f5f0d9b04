/**
 * The fault suite (`npm run test:faults`): a bounded mixed load on loopback while the harness injects
 * one fault at a time, then checks that nothing was lost or done twice. See docs/reliability.md.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDatabase, runMigrations } from '../../src/db/client';
import { createMerchant, type MerchantCredentials } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';
import { freePortRun, startEmbeddedPostgres, type LocalPostgres } from '../../src/dev/postgres';
import { startTemporalDevServer, type LocalTemporal } from '../../src/dev/temporal';
import { ensureSearchAttributes } from '../../src/temporal/search-attributes';
import {
  cleanUpAfterAll,
  FaultyReceiver,
  freePorts,
  ready,
  SERVICE_COMMAND,
  ServiceProcess,
  until,
} from './harness';
import { LoadClient, type Created, type Merchant } from './load';
import { depositsOf, expectClean, report, runLoad, verify } from './verdict';

const TRANSACTIONS = Number(process.env.FAULT_TRANSACTIONS ?? 150);
const CONCURRENCY = 4;
const cleanups = cleanUpAfterAll();

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Settings that make retries quick enough to watch: a 1 s webhook timeout and a short retry schedule. */
const serviceSettings = {
  LOG_LEVEL: 'warn',
  SHUTDOWN_DRAIN_SECONDS: '0',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,2,3,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5',
  RATE_LIMIT_PER_SECOND: '10000',
  RATE_LIMIT_BURST: '10000',
  PAGE_RATE_LIMIT_PER_SECOND: '10000',
  PAGE_RATE_LIMIT_BURST: '10000',
};

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

const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'payments-faults-'));
  chmodSync(dir, 0o755); // embedded Postgres runs as its own user when we are root
  cleanups.push(async () => {
    if (process.env.FAULTS_KEEP) process.stdout.write(`[faults] kept ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  });
  return dir;
};

describe('fault suite', () => {
  it('API and worker processes survive a worker kill, a Temporal restart, 20 s without Postgres and a failing webhook endpoint', async () => {
    const dir = scratch();
    const [pgPort, temporalPort, uiPort, apiPort, receiverPort] = await freePorts(5);
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
    const worker = new ServiceProcess('worker', SERVICE_COMMAND, { ...env, ROLE: 'worker' });
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
    const merchant: Merchant = {
      testKey: credentials.test_secret_key,
      encryptionKey: credentials.encryption_key,
      usdWallet: credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id,
    };
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
  }, 900_000);

  it('npm run dev comes back from a SIGKILL of its own processes mid-load, stopping what they left running', async () => {
    const dir = scratch();
    // The local chains take five consecutive ports from DEV_ANVIL_PORT, apart from the others.
    const anvilPort = await freePortRun(5);
    const [pgPort, temporalPort, uiPort, apiPort, receiverPort, btcdPort, solanaPort] = (await freePorts(12))
      .filter((port) => port < anvilPort || port > anvilPort + 4)
      .slice(0, 7) as [number, number, number, number, number, number, number];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...serviceSettings,
      PAYMENTS_DATA_DIR: dir,
      PORT: String(apiPort),
      DEV_POSTGRES_PORT: String(pgPort),
      DEV_TEMPORAL_PORT: String(temporalPort),
      DEV_TEMPORAL_UI_PORT: String(uiPort),
      // Its own local chain port too: a developer's `npm run dev` may hold the default one.
      DEV_ANVIL_PORT: String(anvilPort),
      DEV_BTCD_PORT: String(btcdPort),
      DEV_SOLANA_PORT: String(solanaPort),
    };
    // What the test runner puts in the environment is not the developer's: Vite's BASE_URL is '/'.
    for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'BASE_URL', 'NODE_ENV']) delete env[name];
    const baseUrl = `http://127.0.0.1:${apiPort}`;
    let dev = new ServiceProcess('npm run dev', [process.execPath, 'scripts/dev.mjs'], env);
    cleanups.push(async () => dev.stop());
    dev.start();
    await until('npm run dev to be ready', ready(baseUrl), 180_000, () => dev.ended).catch((error: Error) => {
      throw new Error(`${error.message}; its output:\n${dev.log}`);
    });

    const receiver = new FaultyReceiver(receiverPort!);
    await receiver.start();
    cleanups.push(() => receiver.close());
    const sandbox = JSON.parse(
      readFileSync(join(dir, 'sandbox-merchant.json'), 'utf8'),
    ) as MerchantCredentials;
    const merchant: Merchant = {
      testKey: sandbox.test_secret_key,
      encryptionKey: sandbox.encryption_key,
      usdWallet: sandbox.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id,
    };
    const databaseUrl = (
      JSON.parse(readFileSync(join(dir, 'dev-instance.json'), 'utf8')) as { database_url: string }
    ).database_url;
    const client = new LoadClient(() => baseUrl, merchant, receiver.url);
    const created: Created[] = [];
    const total = Math.max(25, Math.floor(TRANSACTIONS / 3));
    const load = runLoad(client, total, CONCURRENCY, created, () => pause(200));

    await until('some transactions to be under way', async () => created.length >= 8, 120_000);
    // The hard kill: the npm run dev node processes only, as an OOM kill or a closed terminal does.
    const devPid = dev.pid!;
    const children = execFileSync('pgrep', ['-P', String(devPid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
    dev.expectExit();
    for (const pid of [devPid, ...children]) process.kill(pid, 'SIGKILL');
    // pgrep exits 1 when nothing matches.
    const orphans = () => {
      try {
        return execFileSync('pgrep', ['-f', dir], { encoding: 'utf8' }).split('\n').filter(Boolean).length;
      } catch {
        return 0;
      }
    };
    const orphanCount = orphans();
    process.stdout.write(
      `[faults] SIGKILLed npm run dev (pids ${[devPid, ...children].join(', ')}); ${orphanCount} processes left running on its data\n`,
    );

    await pause(2_000);
    dev = new ServiceProcess('npm run dev', [process.execPath, 'scripts/dev.mjs'], env);
    dev.start();
    await until('npm run dev to be ready again', ready(baseUrl), 180_000, () => dev.ended).catch(
      (error: Error) => {
        throw new Error(`${error.message}; its output:\n${dev.log}`);
      },
    );
    expect(dev.log).toMatch(
      /stopped the (PostgreSQL|Temporal dev server) \(pid \d+\) an earlier run left behind/,
    );
    await load;

    const verdict = await verify(databaseUrl, created, receiver, sandbox.merchant_id);
    report('faults', 'npm run dev hard kill', verdict, {
      faultsInjected: 1,
      orphansLeftByTheKill: orphanCount,
      requestRetries: client.retries,
    });
    expect(orphanCount).toBeGreaterThan(0);
    expectClean(verdict);

    // A plain stop, as a process manager sends it: SIGTERM to npm run dev's own process only. Whatever
    // library hook ends the process first, nothing it started stays running on its data.
    dev.expectExit();
    process.kill(dev.pid!, 'SIGTERM');
    await until(
      'npm run dev to stop everything it started',
      async () => dev.ended !== undefined && orphans() === 0,
      60_000,
    );
  }, 900_000);
});
