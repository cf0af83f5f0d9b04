import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server, Socket } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { freePort } from '../../src/dev/postgres';
import { waitForPort } from '../../src/dev/temporal';

/** A service process (`ROLE=api` or `ROLE=worker`, or `npm run dev`) the harness can kill and restart. */
export class ServiceProcess {
  private child: ChildProcess | undefined;
  private output = '';
  /** Set when the harness stops the process: any other exit is reported as it happens, with its log. */
  private stopping = false;

  constructor(
    readonly name: string,
    private readonly command: string[],
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  start(): void {
    const [bin, ...args] = this.command;
    // Its own process group, so a kill reaches what it spawned only when we say so.
    this.child = spawn(bin!, args, { env: this.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-20_000);
    };
    this.child.stdout?.on('data', keep);
    this.child.stderr?.on('data', keep);
    this.stopping = false;
    this.child.once('exit', (code, signal) => {
      if (this.stopping) return;
      process.stdout.write(
        `[faults] ${this.name} exited on its own (${code ?? signal}) at ${new Date().toISOString()}; ` +
          `its last lines:\n${this.output.slice(-6000)}\n`,
      );
    });
  }

  /** Set once the process has ended, with how. */
  get ended(): string | undefined {
    const child = this.child;
    if (!child || (child.exitCode === null && child.signalCode === null)) return undefined;
    return `${this.name} exited (${child.exitCode ?? child.signalCode})`;
  }

  /** The harness is about to end the process itself (by pid): its exit is no news. */
  expectExit(): void {
    this.stopping = true;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get log(): string {
    return this.output;
  }

  /** SIGKILL, as the OOM killer would: no shutdown hook runs. Only this process, not its children. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.stopping = true;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** SIGTERM to the process alone, as a rolling deploy or `docker stop` sends; resolves with its exit code. */
  async terminate(): Promise<number | null> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
    this.stopping = true;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    return exited;
  }

  /** A clean stop of the whole group (Ctrl-C). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    this.stopping = true;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      process.kill(-child.pid, 'SIGINT');
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 20_000);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * What a test file starts, stopped after all its tests in the reverse order, each failure ignored (a
 * process may already be gone). `push` as it starts things.
 */
export function cleanUpAfterAll(): { push(...cleanups: (() => Promise<unknown>)[]): void } {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  });
  return { push: (...added) => void cleanups.push(...added) };
}

/** Polls until `probe` answers true, or fails naming `what`. */
/** How many transactions each fault test's load makes (FAULT_TRANSACTIONS), and how many at once. */
export const TRANSACTIONS = Number(process.env.FAULT_TRANSACTIONS ?? 150);
export const CONCURRENCY = 4;

export const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Settings that make retries quick enough to watch: a 1 s webhook timeout and a short retry schedule. */
export const serviceSettings = {
  LOG_LEVEL: 'warn',
  SHUTDOWN_DRAIN_SECONDS: '0',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,2,3,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5',
  RATE_LIMIT_PER_SECOND: '10000',
  RATE_LIMIT_BURST: '10000',
  PAGE_RATE_LIMIT_PER_SECOND: '10000',
  PAGE_RATE_LIMIT_BURST: '10000',
};

/** A scratch folder for one test's servers, removed after the file (kept when FAULTS_KEEP is set). */
export function scratchDir(cleanups: { push(...cleanups: (() => Promise<unknown>)[]): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'payments-faults-'));
  chmodSync(dir, 0o755); // embedded Postgres runs as its own user when we are root
  cleanups.push(async () => {
    if (process.env.FAULTS_KEEP) process.stdout.write(`[faults] kept ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

export async function until(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs = 120_000,
  giveUpIf: () => string | undefined = () => undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    const reason = giveUpIf();
    if (reason !== undefined) throw new Error(`gave up waiting for ${what}: ${reason}`);
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export const ready = (baseUrl: string) => async () => (await fetch(`${baseUrl}/readyz`)).ok;

/** The service's entry point, as `npm start` runs it. */
export const SERVICE_COMMAND = [process.execPath, 'bin/service.js'];

/** Waits until a started service's `/readyz` answers 200; fails with its output if it exits first. */
export function waitReady(url: string, service: ServiceProcess, timeoutMs = 180_000): Promise<void> {
  return until(`${service.name} to be ready`, ready(url), timeoutMs, () => service.ended).catch(
    (error: Error) => {
      throw new Error(`${error.message}\n${service.log}`);
    },
  );
}

/**
 * `ROLE=api` processes on `apiPorts` and `ROLE=worker` processes serving `/readyz` on `workerPorts`, all
 * with `env`, started; `onStop` receives each one's stop for the test's clean-up. `ready` waits for all.
 */
export function startRoles(
  env: NodeJS.ProcessEnv,
  ports: { api: number[]; worker: number[] },
  onStop: (stop: () => Promise<void>) => void,
  options: { cpuProfileDir?: string } = {},
) {
  // With a profile folder, each process writes a V8 CPU profile there when it exits (a stop, not a kill).
  const command = (name: string) =>
    options.cpuProfileDir
      ? [
          process.execPath,
          '--cpu-prof',
          '--cpu-prof-dir',
          join(options.cpuProfileDir, name.replace(/\W+/g, '-')),
          ...SERVICE_COMMAND.slice(1),
        ]
      : SERVICE_COMMAND;
  const apis = ports.api.map(
    (port, i) =>
      new ServiceProcess(`api :${port}`, command(`api ${i + 1}`), {
        ...env,
        ROLE: 'api',
        PORT: String(port),
      }),
  );
  const workers = ports.worker.map(
    (port, i) =>
      new ServiceProcess(`worker :${port}`, command(`worker ${i + 1}`), {
        ...env,
        ROLE: 'worker',
        METRICS_PORT: String(port),
      }),
  );
  for (const service of [...apis, ...workers]) {
    onStop(() => service.stop());
    service.start();
  }
  const apiUrls = ports.api.map((port) => `http://127.0.0.1:${port}`);
  const workerUrls = ports.worker.map((port) => `http://127.0.0.1:${port}`);
  return {
    apis,
    workers,
    apiUrls,
    workerUrls,
    ready: async () => {
      await Promise.all([
        ...apis.map((service, i) => waitReady(apiUrls[i]!, service)),
        ...workers.map((service, i) => waitReady(workerUrls[i]!, service)),
      ]);
    },
  };
}

export { freePort, waitForPort };

export interface ReceivedEvent {
  eventId: string;
  transactionId: string;
  status: string;
  /** When it was acknowledged (`Date.now()`). */
  at: number;
}

export type ReceiverFault = 'none' | 'http-503' | 'timeout' | 'refused';

/**
 * The merchants' webhook endpoint, on a fixed loopback port so it can go away (connection refused) and
 * come back. It records what it acknowledged (2xx) and can answer 503 or hang past the delivery timeout.
 */
export class FaultyReceiver {
  readonly acknowledged: ReceivedEvent[] = [];
  attempts = 0;
  fault: ReceiverFault = 'none';
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  constructor(readonly port: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/webhooks`;
  }

  async start(): Promise<void> {
    const http = createHttpServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        this.attempts += 1;
        if (this.fault === 'timeout') return; // never answers: the delivery times out
        if (this.fault === 'http-503') {
          response.statusCode = 503;
          response.end('down');
          return;
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        const data = body.data as Record<string, unknown> | undefined;
        this.acknowledged.push({
          eventId: String(body.event_id),
          transactionId: String(data?.transaction_id),
          status: String(body.status),
          at: Date.now(),
        });
        response.end('ok');
      });
    });
    http.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.server = http;
    await new Promise<void>((resolve) => http.listen(this.port, '127.0.0.1', resolve));
  }

  /** Connection refused from now on, until `start` again. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
    this.server = undefined;
  }
}

/** A free loopback port that stays free long enough to be handed to a process. */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}
