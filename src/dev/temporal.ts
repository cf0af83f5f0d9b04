import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './postgres';
import { startUiProxy } from './ui-proxy';
import { connect } from 'node:net';
import { allSearchAttributes } from '../contracts';
import { stopChild } from './child';
import { NAMESPACE_REFRESH_MS } from '../temporal/search-attributes';

export interface LocalTemporal {
  address: string;
  uiUrl?: string;
  /** The server's process, when we started it. */
  pid?: number;
  stop(): Promise<void>;
}

/** Arguments shared by every local dev server we start: our search attributes and its dynamic config. */
export function devServerArgs(): string[] {
  return [
    ...allSearchAttributes.flatMap((key) => ['--search-attribute', `${key.name}=Keyword`]),
    ...dynamicConfigArgs(),
  ];
}

export function dynamicConfigArgs(): string[] {
  return [
    '--dynamic-config-value',
    'frontend.enableExecuteMultiOperation=true',
    '--dynamic-config-value',
    'frontend.enableUpdateWorkflowExecution=true',
    // The dev server turns this testing aid on: every search-attribute lookup reads the namespace and the
    // cluster metadata from its database (two thirds of its persistence requests per transaction). Off,
    // as on the real server (deploy/temporal/dynamicconfig.yaml): the attributes it is started with are
    // usable at once, and ensureSearchAttributes waits out the reload for any it adds later.
    '--dynamic-config-value',
    'system.forceSearchAttributesCacheRefreshOnRead=false',
    // The reload ensureSearchAttributes waits out (NAMESPACE_REFRESH_MS), whatever the CLI's default.
    '--dynamic-config-value',
    `system.namespaceCacheRefreshInterval="${NAMESPACE_REFRESH_MS / 1000}s"`,
    // The dev server's default, written down because the real server's is off (deploy/temporal/dynamicconfig.yaml).
    '--dynamic-config-value',
    'system.enableActivityEagerExecution=true',
  ];
}

/** Waits until something accepts connections on `host:port`; gives up early once `gone()` says it never will. */
export async function waitForPort(
  host: string,
  port: number,
  timeoutMs: number,
  gone: () => boolean = () => false,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host, port }, () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (gone()) throw new Error(`what was to listen on ${host}:${port} has exited`);
    if (Date.now() > deadline) throw new Error(`nothing listens on ${host}:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The dev server's SQLite store: a write-ahead log synced at every commit. As durable as SQLite's default
 * rollback journal (a commit survives the server's process and the machine), with one file sync per
 * commit instead of several. Measured in bench/README.md ("The dev server's SQLite in WAL mode"). The
 * store is then three files (`temporal.db` and its `-wal` and `-shm`), to be copied or removed together.
 */
export const DEV_SERVER_SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=full'];

/** The Temporal CLI dev server as a child process, with its SQLite file and Web UI. */
export async function startTemporalDevServer(options: {
  binary: string;
  port: number;
  uiPort: number;
  dbFile: string;
  codecEndpoint?: string;
  /** SQLite pragmas for the server's store, `name=value`; `DEV_SERVER_SQLITE_PRAGMAS` by default. */
  sqlitePragmas?: string[];
  /** Where the server serves its Prometheus metrics (the bench counts persistence requests there). */
  metricsPort?: number;
  /**
   * The Web UI behind a proxy that switches off what ops never need on transactions (Start Workflow,
   * Terminate, batch actions: src/dev/ui-proxy.ts); the server's own UI then listens on a port of its own.
   */
  uiActionsOff?: boolean;
}): Promise<LocalTemporal> {
  const serverUiPort = options.uiActionsOff ? await freePort() : options.uiPort;
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--ui-port',
    String(serverUiPort),
    '--db-filename',
    options.dbFile,
    '--log-level',
    'error',
    ...(options.codecEndpoint ? ['--ui-codec-endpoint', options.codecEndpoint] : []),
    ...(options.sqlitePragmas ?? DEV_SERVER_SQLITE_PRAGMAS).flatMap((pragma) => ['--sqlite-pragma', pragma]),
    ...(options.metricsPort ? ['--metrics-port', String(options.metricsPort)] : []),
    ...devServerArgs(),
  ];
  const child: ChildProcess = spawn(options.binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr = (stderr + String(chunk)).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  // However this process ends (another library's signal hook may call process.exit first), the server goes too.
  const killOnExit = () => child.kill('SIGTERM');
  process.once('exit', killOnExit);
  void exited.then(() => process.removeListener('exit', killOnExit));
  await Promise.race([
    waitForPort('127.0.0.1', options.port, 60_000),
    exited.then((code) => {
      throw new Error(`the Temporal dev server exited (${code}):\n${stderr}`);
    }),
  ]);
  const proxy = options.uiActionsOff
    ? await startUiProxy({ host: '127.0.0.1', port: options.uiPort, upstreamPort: serverUiPort }).catch(
        (error: unknown) => {
          child.kill('SIGTERM');
          throw error;
        },
      )
    : undefined;
  return {
    address: `127.0.0.1:${options.port}`,
    uiUrl: `http://127.0.0.1:${options.uiPort}`,
    ...(child.pid !== undefined ? { pid: child.pid } : {}),
    async stop() {
      await proxy?.close();
      await stopChild(child, exited, 10_000);
    },
  };
}
