import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { createServer } from 'node:net';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { ensureSearchAttributes } from '../../src/temporal/search-attributes';
import { freePorts, ServiceProcess, until, waitForPort } from '../faults/harness';

const run = promisify(execFile);

/** The dynamic config the Compose file mounts into its Temporal server: the same file, so both agree. */
export const DYNAMIC_CONFIG = resolve('deploy/temporal/dynamicconfig.yaml');

export interface RealTemporal {
  address: string;
  server: ServiceProcess;
  /** Kills the server (SIGKILL) and starts it again on the same ports and databases. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A real Temporal server (not the dev server) with its persistence and visibility in PostgreSQL: the two
 * databases created, the schema applied with Temporal's own SQL tool, the `default` namespace registered
 * and our search attributes added, as an operator sets up a cluster (docs/operations.md).
 */
export async function startRealTemporal(options: {
  server: string;
  sqlTool: string;
  dir: string;
  postgresUrl: string;
  /** Where the server serves Go's pprof (`/debug/pprof/`), for the capacity bench's profiles. */
  pprofPort?: number;
  /** Where the server serves its Prometheus metrics (`/metrics`), for the soak's count of its idle work. */
  metricsPort?: number;
}): Promise<RealTemporal> {
  const url = new URL(options.postgresUrl);
  const admin = new pg.Client({ connectionString: options.postgresUrl });
  await admin.connect();
  for (const database of ['temporal', 'temporal_visibility']) {
    await admin.query(`create database ${database}`);
  }
  await admin.end();

  const sql = (database: string, ...args: string[]) =>
    run(options.sqlTool, [
      '--plugin',
      'postgres12',
      '--ep',
      url.hostname,
      '-p',
      url.port,
      '-u',
      decodeURIComponent(url.username),
      '--pw',
      decodeURIComponent(url.password),
      '--db',
      database,
      ...args,
    ]);
  for (const [database, schema] of [
    ['temporal', 'postgresql/v12/temporal'],
    ['temporal_visibility', 'postgresql/v12/visibility'],
  ] as const) {
    await sql(database, 'setup-schema', '-v', '0.0');
    await sql(database, 'update-schema', '--schema-name', schema);
  }

  const [grpc, http, history, matching, worker] = await freePorts(5);
  const membership = [await lowPort(), await lowPort(), await lowPort(), await lowPort()];
  const configDir = join(options.dir, 'config');
  mkdirSync(configDir, { recursive: true });
  writeFileSync(
    join(configDir, 'cluster.yaml'),
    serverConfig({
      postgres: url,
      ports: { grpc: grpc!, http: http!, history: history!, matching: matching!, worker: worker! },
      membership: membership as [number, number, number, number],
      pprofPort: options.pprofPort,
      metricsPort: options.metricsPort,
    }),
  );
  const server = new ServiceProcess(
    'temporal server',
    [
      options.server,
      '--root',
      options.dir,
      '--config',
      'config',
      '--env',
      'cluster',
      '--allow-no-auth',
      'start',
    ],
    { ...process.env },
  );
  const address = `127.0.0.1:${grpc}`;
  const started = async () => {
    server.start();
    await waitForPort('127.0.0.1', grpc!, 120_000);
    // The frontend listens before the history shards are owned; a namespace call answers once they are.
    await until(
      'the Temporal server to answer',
      async () => {
        const connection = await Connection.connect({ address, connectTimeout: 2_000 });
        try {
          await connection.workflowService.getSystemInfo({});
          return true;
        } finally {
          await connection.close();
        }
      },
      120_000,
      () => server.ended && `${server.ended}\n${server.log.slice(-3000)}`,
    );
  };
  await started();

  const connection = await Connection.connect({ address });
  try {
    await until('the default namespace to be registered', async () => {
      try {
        await connection.workflowService.registerNamespace({
          namespace: 'default',
          workflowExecutionRetentionPeriod: msToTs('1 day'),
        });
      } catch (error) {
        if (!/already exists|AlreadyExists/i.test(String(error))) throw error;
      }
      await connection.workflowService.describeNamespace({ namespace: 'default' });
      return true;
    });
  } finally {
    await connection.close();
  }
  // It returns once every service can use them (a retry after a failed call finds them registered and
  // still waits one namespace reload).
  await until('the search attributes to be usable', async () => {
    await ensureSearchAttributes(address, 'default');
    return true;
  });

  return {
    address,
    server,
    async restart() {
      await server.kill();
      await started();
    },
    stop: () => server.stop(),
  };
}

/**
 * A free loopback port below 32768: the server records membership ports in a smallint column, and the
 * system hands out ephemeral ports above it.
 */
async function lowPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

function serverConfig(options: {
  postgres: URL;
  ports: { grpc: number; http: number; history: number; matching: number; worker: number };
  membership: [number, number, number, number];
  pprofPort?: number;
  metricsPort?: number;
}): string {
  const { postgres, ports, membership, pprofPort, metricsPort } = options;
  const metrics = metricsPort
    ? `\n  metrics:\n    prometheus:\n      framework: tally\n      listenAddress: 127.0.0.1:${metricsPort}`
    : '';
  const store = (database: string, maxConns: number) => `
      sql:
        pluginName: postgres12
        databaseName: ${database}
        connectAddr: "${postgres.hostname}:${postgres.port}"
        connectProtocol: tcp
        user: "${decodeURIComponent(postgres.username)}"
        password: "${decodeURIComponent(postgres.password)}"
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: 1h`;
  const service = (grpc: number, membershipPort: number, extra = '') => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membershipPort}
      bindOnLocalHost: true${extra}`;
  return `# Written by test/cluster/temporal-server.ts for one run.
log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:${store('temporal', 20)}
    postgres-visibility:${store('temporal_visibility', 4)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1${pprofPort ? `\n  pprof:\n    port: ${pprofPort}` : ''}${metrics}
services:
  frontend:${service(ports.grpc, membership[0], `\n      httpPort: ${ports.http}`)}
  history:${service(ports.history, membership[1])}
  matching:${service(ports.matching, membership[2])}
  worker:${service(ports.worker, membership[3])}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:${ports.grpc}
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: ${DYNAMIC_CONFIG}
  pollInterval: 10s
`;
}
