import { loadConfig, ConfigError, type Config } from '../platform/config';
import { createDatabase, runMigrations } from '../db/client';
import { createLogger, type Logger } from '../platform/log';
import { createTemporalClient } from '../temporal/client';
import { createWorker, NativeConnection, installRuntime } from './worker';
import { buildApp } from '../api/app';
import { startMaintenance } from './maintenance';
import { liveSandboxTerminals } from '../merchants/terminals';
import { startChainWatcher } from '../chain/watcher';

export interface Running {
  stop(): Promise<void>;
  url?: string;
}

/** Runs the API, the worker, or both (ROLE), until stopped. */
export async function start(config: Config, log: Logger = createLogger(config.LOG_LEVEL)): Promise<Running> {
  const database = createDatabase(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  await runMigrations(database.pool);
  if (!config.ALLOW_SANDBOX_IN_LIVE) {
    const sandboxes = await liveSandboxTerminals(database.db);
    if (sandboxes.length > 0) {
      await database.close();
      throw new ConfigError(
        `Live terminals on sandbox connectors (they approve any card and move no money): ${sandboxes
          .map((t) => `${t.id} of ${t.merchantId} (${t.connector})`)
          .join(
            ', ',
          )}. Deactivate them or move them to a real connector; ALLOW_SANDBOX_IN_LIVE=true allows them (never in production).`,
      );
    }
  }
  const stopMaintenance = startMaintenance(database.db, log);
  const stops: (() => Promise<void>)[] = [async () => stopMaintenance(), () => database.close()];
  let url: string | undefined;

  if (config.ROLE !== 'api') {
    installRuntime(log);
    const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
    const worker = await createWorker({ config, db: database.db, connection, log });
    const running = worker.run();
    stops.unshift(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await connection.close();
    });
    running.catch((error: unknown) => {
      log.fatal({ err: error }, 'worker stopped');
      process.exitCode = 1;
    });
    const watcherClient = await createTemporalClient(config);
    const watcher = startChainWatcher({
      db: database.db,
      temporal: watcherClient,
      masterKey: config.MASTER_KEY,
      log,
      pollMs: config.CHAIN_POLL_MS,
    });
    stops.unshift(async () => {
      await watcher.stop();
      await watcherClient.connection.close();
    });
    log.info({ taskQueue: config.TEMPORAL_TASK_QUEUE }, 'worker started');
  }

  if (config.ROLE !== 'worker') {
    const temporal = await createTemporalClient(config);
    const app = await buildApp({ config, db: database.db, temporal, log });
    url = await app.listen({ host: config.HOST, port: config.PORT });
    stops.unshift(async () => {
      await app.close();
      await temporal.connection.close();
    });
  }

  return {
    url,
    async stop() {
      for (const stop of stops) await stop();
    },
  };
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const log = createLogger(config.LOG_LEVEL);
  const running = await start(config, log).catch((error: unknown) => {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  });
  const shutdown = () => {
    log.info('shutting down');
    running.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
