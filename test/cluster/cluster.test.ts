/**
 * The production topology (`npm run test:cluster`, docs/reliability.md): a real Temporal server on
 * PostgreSQL, two `ROLE=api` and two `ROLE=worker` processes, a bounded mixed load, and one API and one
 * worker killed with SIGKILL mid-load and started again. Afterwards every transaction is final, nothing
 * is lost or done twice, and every webhook arrived.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createDatabase, runMigrations } from '../../src/db/client';
import { startEmbeddedPostgres } from '../../src/dev/postgres';
import { createMerchant } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';
import { cleanUpAfterAll, FaultyReceiver, freePorts, startRoles, until, waitReady } from '../faults/harness';
import { LoadClient, type Created } from '../faults/load';
import { expectClean, report, runLoad, verify } from '../faults/verdict';
import { startRealTemporal } from './temporal-server';

const TRANSACTIONS = Number(process.env.CLUSTER_TRANSACTIONS ?? 150);
const CONCURRENCY = 4;

const cleanups = cleanUpAfterAll();

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('cluster', () => {
  it('two APIs and two workers on a real Temporal server lose and double nothing when one of each is killed', async () => {
    const server = process.env.TEMPORAL_SERVER_PATH;
    const sqlTool = process.env.TEMPORAL_SQL_TOOL_PATH;
    if (!server || !sqlTool)
      throw new Error('Run through `npm run test:cluster`: it builds the Temporal server.');
    const dir = mkdtempSync(join(tmpdir(), 'payments-cluster-'));
    chmodSync(dir, 0o755); // embedded Postgres runs as its own user when we are root
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));

    const [pgPort, apiA, apiB, metricsA, metricsB, receiverPort] = await freePorts(6);
    const postgres = await startEmbeddedPostgres({
      dir: join(dir, 'pg'),
      port: pgPort!,
      database: 'postgres',
      persistent: true,
    });
    cleanups.push(() => postgres.stop());
    const temporal = await startRealTemporal({
      server,
      sqlTool,
      dir: join(dir, 'temporal'),
      postgresUrl: postgres.url,
    });
    cleanups.push(() => temporal.stop());

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

    const env = {
      ...process.env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      MASTER_KEY: masterKey,
      PAYLOAD_KEYS: `cluster:${randomBytes(32).toString('hex')}`,
      HOST: '127.0.0.1',
      BASE_URL: `http://127.0.0.1:${apiA}`,
      SHUTDOWN_DRAIN_SECONDS: '0',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,2,3,5',
      RATE_LIMIT_PER_SECOND: '10000',
      RATE_LIMIT_BURST: '10000',
      PAGE_RATE_LIMIT_PER_SECOND: '10000',
      PAGE_RATE_LIMIT_BURST: '10000',
    };
    const { apis, workers, apiUrls, workerUrls, ...services } = startRoles(
      env,
      { api: [apiA!, apiB!], worker: [metricsA!, metricsB!] },
      (stop) => cleanups.push(stop),
    );
    await services.ready();

    const receiver = new FaultyReceiver(receiverPort!);
    await receiver.start();
    cleanups.push(() => receiver.close());
    // Requests alternate between the two APIs, as a load balancer would spread them.
    let turn = 0;
    const client = new LoadClient(
      () => apiUrls[turn++ % apiUrls.length]!,
      {
        testKey: credentials.test_secret_key,
        encryptionKey: credentials.encryption_key,
        usdWallet: credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id,
      },
      receiver.url,
    );
    const created: Created[] = [];
    let killing = true;
    const load = runLoad(client, TRANSACTIONS, CONCURRENCY, created, () => pause(killing ? 200 : 0));

    await until('the load to be under way', async () => created.length >= 15, 180_000);
    const killedAfter = created.length;
    // As the OOM killer or a lost machine would: no shutdown hook runs.
    await Promise.all([apis[0]!.kill(), workers[0]!.kill()]);
    process.stdout.write(
      `[cluster] SIGKILLed ${apis[0]!.name} and ${workers[0]!.name} after ${killedAfter} transactions\n`,
    );
    await pause(3_000);
    apis[0]!.start();
    workers[0]!.start();
    await Promise.all([waitReady(apiUrls[0]!, apis[0]!), waitReady(workerUrls[0]!, workers[0]!)]);
    killing = false;
    await load;

    const verdict = await verify(databaseUrl, created, receiver, credentials.merchant_id);
    report('cluster', 'two APIs and two workers on a real Temporal server on PostgreSQL', verdict, {
      processesKilled: 2,
      killedAfterTransactions: killedAfter,
      requestRetries: client.retries,
      webhookAttempts: receiver.attempts,
    });
    for (const line of verdict.notFinal) {
      process.stdout.write(
        `[cluster] not final: ${line}\n  ${(client.trail.get(line.split(' ')[0]!) ?? []).join('\n  ')}\n`,
      );
    }
    process.stdout.write(
      `[cluster] transactions ${verdict.transactions}, processes killed 2, lost ${verdict.lost}, doubled ${verdict.duplicatedEffects}, webhooks missing ${verdict.webhooksMissing}\n`,
    );
    expect(created.length).toBe(TRANSACTIONS);
    expectClean(verdict);
  }, 1_200_000);
});
