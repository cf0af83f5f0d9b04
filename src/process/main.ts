import { loadConfig, ConfigError, type Config } from '../platform/config';
import { createDatabase, runMigrations } from '../db/client';
import { createLogger, type Logger } from '../platform/log';
import { createTemporalClient } from '../temporal/client';
import { ensureReconciliationSchedule } from '../temporal/reconciliation';
import { registerOpenBreaks } from '../reconciliation/metrics';
import { createWorker, NativeConnection, installRuntime } from './worker';
import { buildApp } from '../api/app';
import { startMaintenance } from './maintenance';
import { liveSandboxTerminals } from '../merchants/terminals';
import { startChainWatcher } from '../chain/watcher';
import { createWorkerMetrics } from '../platform/metrics';
import { serveWorkerEndpoints } from './worker-endpoints';
import { freeLoopbackPort } from './ports';
import { startTracing } from '../platform/tracing';

export interface Running {
  /** Drains and stops everything, in order: the API first, then the worker, then the pools. */
  stop(): Promise<void>;
  url?: string;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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
  const stops: (() => Promise<void>)[] = [stopMaintenance, () => database.close()];
  let url: string | undefined;

  const tracing = startTracing(config);
  // Spans still buffered go out last, after everything that makes them has stopped.
  if (tracing) stops.push(() => tracing.shutdown());

  // Set when a stop begins: `/readyz` answers 503 from then on, on the API and on the worker's port.
  let draining = false;
  const workerMetrics = createWorkerMetrics({ process: config.ROLE === 'worker' });
  registerOpenBreaks(workerMetrics.registry, database.db);
  let sdkMetricsUrl: string | undefined;
  const workerMetricsText = async () => {
    const sdk = sdkMetricsUrl
      ? await fetch(sdkMetricsUrl, { signal: AbortSignal.timeout(2000) })
          .then((response) => response.text())
          .catch(() => '')
      : '';
    return `${await workerMetrics.registry.metrics()}${sdk}`;
  };
  let workerUrl: string | undefined;

  if (config.ROLE !== 'api') {
    const sdkPort = await freeLoopbackPort();
    installRuntime(log, { metricsAddress: `127.0.0.1:${sdkPort}` });
    sdkMetricsUrl = `http://127.0.0.1:${sdkPort}/metrics`;
    const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
    const worker = await createWorker({
      config,
      db: database.db,
      connection,
      log,
      metrics: workerMetrics,
      tracing,
    });
    const running = worker.run();
    stops.unshift(async () => {
      // Stops polling; activities under way finish (up to SHUTDOWN_GRACE_SECONDS), then the run ends.
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
      metrics: workerMetrics,
    });
    stops.unshift(async () => {
      await watcher.stop();
      await watcherClient.connection.close();
    });
    // One schedule for every worker process (docs/reconciliation.md); payments go on without it.
    await ensureReconciliationSchedule(watcherClient, {
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      everySeconds: config.RECONCILIATION_EVERY_SECONDS,
    }).catch((error: unknown) =>
      log.error({ err: error }, 'the reconciliation schedule could not be set up'),
    );
    if (config.ROLE === 'worker') {
      const endpoints = await serveWorkerEndpoints({
        host: config.HOST,
        port: config.METRICS_PORT,
        metrics: async () => ({
          contentType: workerMetrics.registry.contentType,
          text: await workerMetricsText(),
        }),
        ready: () => !draining && worker.getState() === 'RUNNING',
      });
      workerUrl = endpoints.url;
      // Closed last, so a scrape during the drain still answers.
      stops.push(() => endpoints.close());
    }
    log.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, endpoints: workerUrl }, 'worker started');
  }

  if (config.ROLE !== 'worker') {
    const temporal = await createTemporalClient(config);
    const app = await buildApp({
      config,
      db: database.db,
      temporal,
      log,
      draining: () => draining,
      tracing: tracing !== undefined,
      ...(config.ROLE === 'all' ? { extraMetrics: workerMetricsText } : {}),
    });
    url = await app.listen({ host: config.HOST, port: config.PORT });
    stops.unshift(async () => {
      // Ready no more, but still serving while load balancers notice; then stop accepting, let the
      // requests under way finish (Fastify closes idle keep-alive connections) and close the pools.
      if (config.SHUTDOWN_DRAIN_SECONDS > 0) {
        log.info({ seconds: config.SHUTDOWN_DRAIN_SECONDS }, 'draining: /readyz answers 503');
        await pause(config.SHUTDOWN_DRAIN_SECONDS * 1000);
      }
      await app.close();
      await temporal.connection.close();
    });
  }

  let stopping: Promise<void> | undefined;
  return {
    url,
    stop() {
      stopping ??= (async () => {
        draining = true;
        for (const stop of stops) await stop();
      })();
      return stopping;
    },
  };
}

export async function main(): Promise<void> {
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
  let signals = 0;
  const shutdown = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      log.warn({ signal }, 'second stop signal: exiting without waiting');
      process.exit(1);
    }
    log.info({ signal }, 'shutting down');
    // Past the drain and the grace period something is stuck: exit rather than hang the deployment.
    const limit = (config.SHUTDOWN_DRAIN_SECONDS + config.SHUTDOWN_GRACE_SECONDS + 5) * 1000;
    setTimeout(() => {
      log.error({ seconds: limit / 1000 }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, limit).unref();
    running.stop().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
