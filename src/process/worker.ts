import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  bundleWorkflowCode,
  type WorkflowBundle,
} from '@temporalio/worker';
import { Client } from '@temporalio/client';
import { createRequire } from 'node:module';
import { fromRoot } from '../platform/root';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  makeWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry/lib/worker/index.js';
import type { Tracing } from '../platform/tracing';
import type { Config } from '../platform/config';
import type { Db } from '../db/client';
import { createActivities, type ActivityDeps } from '../../activities/index';
import { dataConverter, failureConverterPath } from '../temporal/client';
import type { Logger } from '../platform/log';
import type { WorkerMetrics } from '../platform/metrics';
import { cachedBundle } from './bundle-cache';

export const workflowsPath = fromRoot('workflows', 'index.ts');

/** The OpenTelemetry workflow interceptors, bundled with the workflows when tracing is on. */
const tracingInterceptors = createRequire(import.meta.url).resolve(
  '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
);

/**
 * The workflow code and everything it imports, evaluated once per worker and shared (frozen) by every
 * workflow in the worker's V8 context, instead of once per workflow: a cached workflow then keeps only its
 * own state (bench/README.md, heap per cached workflow: 238 KB with nothing shared, 95 KB shared, 68 KB
 * with no stack traces either). Sound because no module of the workflow code keeps state of its own at
 * module level: every `let` and every object that changes lives in a workflow's own objects. `npm run lint` holds that (the shared-code rule in
 * eslint.config.js).
 */
export const sharedWorkflowModules = [workflowsPath];

/**
 * Loaded first, unless workflow stack traces are wanted: workflows then capture none (its comment says why).
 * Preloaded modules run only in the reused V8 context (the SDK's default, which we keep): a worker with
 * `reuseV8Context: false` would capture stack traces whatever the setting.
 */
const noStackTracesPath = fromRoot('workflows', 'no-stack-traces.ts');

/** How the workflow code is bundled, for the workers and the tests alike. */
export const workflowBundleOptions = {
  workflowsPath,
  failureConverterPath,
};

/** What else goes into a workflow bundle. */
export interface BundleVariant {
  /** The OpenTelemetry workflow interceptors (`TRACING`). */
  traced?: boolean;
  /** Stack traces captured for the Temporal UI's Stack Trace tab (`WORKFLOW_STACK_TRACES`). */
  stackTraces?: boolean;
}

const bundles = new Map<string, Promise<WorkflowBundle>>();

/**
 * Bundles the workflow code once per process, or reads the bundle the same code made before
 * (bundle-cache.ts); a bad import fails here, not in a crash-looping worker.
 * `traced` adds the OpenTelemetry workflow interceptors, which read the trace context from headers and add
 * no commands, so traced and untraced workers replay the same histories; so do workers with and without
 * `stackTraces`.
 */
export function workflowBundle({
  traced = false,
  stackTraces = false,
}: BundleVariant = {}): Promise<WorkflowBundle> {
  const variant = `${traced ? 'traced' : 'plain'}${stackTraces ? '-stack-traces' : ''}`;
  let bundle = bundles.get(variant);
  if (!bundle) {
    bundle = cachedBundle(variant, () =>
      bundleWorkflowCode({
        ...workflowBundleOptions,
        preloadModules: stackTraces ? sharedWorkflowModules : [noStackTracesPath, ...sharedWorkflowModules],
        logger: quietBundlerLogger,
        ...(traced ? { workflowInterceptorModules: [tracingInterceptors] } : {}),
      }),
    );
    bundles.set(variant, bundle);
  }
  return bundle;
}

const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => process.stderr.write(`[bundler] ${message}\n`),
  error: (message: string) => process.stderr.write(`[bundler] ${message}\n`),
};

export async function createWorker(options: {
  config: Config;
  db: Db;
  connection: NativeConnection;
  taskQueue?: string;
  log?: Logger;
  metrics?: WorkerMetrics;
  /** Spans for workflows and activities, continuing the trace of the request that started them. */
  tracing?: Tracing;
  activityOverrides?: Partial<ActivityDeps>;
}): Promise<Worker> {
  const { config, db, connection, metrics, tracing } = options;
  // What only a run's history says (who started a refused run, who Reset one) is read over the worker's
  // own connection.
  const temporal = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    dataConverter: dataConverter(config),
  });
  return Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: options.taskQueue ?? config.TEMPORAL_TASK_QUEUE,
    workflowBundle: await workflowBundle({
      traced: tracing !== undefined,
      stackTraces: config.WORKFLOW_STACK_TRACES,
    }),
    ...(tracing
      ? {
          interceptors: {
            activity: [
              (ctx) => ({
                inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
                outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
              }),
            ],
          },
          sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
        }
      : {}),
    activities: createActivities({
      db,
      config,
      metrics,
      temporal: () => temporal,
      ...options.activityOverrides,
    }),
    dataConverter: dataConverter(config),
    maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS,
    // On shutdown the worker stops polling and lets running activities finish for this long; the process
    // gives up a little later (src/process/main.ts).
    shutdownGraceTime: config.SHUTDOWN_GRACE_SECONDS * 1000,
  });
}

export { NativeConnection };

let runtimeInstalled = false;

/** The SDK's log level for a pino level. */
function sdkLevel(level: string): 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' {
  if (level === 'trace') return 'TRACE';
  if (level === 'debug') return 'DEBUG';
  if (level === 'info') return 'INFO';
  if (level === 'warn') return 'WARN';
  return 'ERROR';
}

/**
 * Sends the Temporal SDK's logs, and the workflows' own (`log` of @temporalio/workflow), through our JSON
 * logger at the process's level and, with `metricsAddress` (`host:port`), serves the SDK's worker metrics
 * (task slots, poll and schedule latencies, cache) there in Prometheus format, for the process's `/metrics`
 * to pass on.
 */
export function installRuntime(log: Logger, options: { metricsAddress?: string } = {}): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({
    ...(options.metricsAddress
      ? { telemetryOptions: { metrics: { prometheus: { bindAddress: options.metricsAddress } } } }
      : {}),
    // The process shuts its worker down itself (src/process/main.ts), in order with the API and Postgres pool.
    shutdownSignals: [],
    // At the process's own level: a workflow's outcome lines are info (a decline is an answer, not a fault).
    logger: new DefaultLogger(sdkLevel(log.level), (entry) => {
      const fields = { ...entry.meta, sdk: true };
      if (entry.level === 'ERROR') log.error(fields, entry.message);
      else if (entry.level === 'WARN') log.warn(fields, entry.message);
      else if (entry.level === 'INFO') log.info(fields, entry.message);
      else log.debug(fields, entry.message);
    }),
  });
}
