// Load generation for `npm run bench`: autocannon for HTTP, with the generator's own CPU and that of the
// processes under test read from /proc, so a result can be told from a saturated machine.
import { readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface Measured {
  name: string;
  requests: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** Cores the load generator used while measuring. */
  generatorCores: number;
  /** Cores each watched process used, by name. */
  cores: Record<string, number>;
}

const TICKS_PER_SECOND = 100;

/**
 * CPU seconds a process has used so far (user + system), with those of the children it has reaped:
 * PostgreSQL's backends come and go, and their time lands in the postmaster's when each ends. 0 where /proc
 * is missing or the process has ended.
 */
export function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command's closing parenthesis: the state (field 3 of proc(5)), then utime, stime, cutime and
    // cstime at fields 14 to 17, 0-based 11 to 14 from the state.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Every process below `root`, with its command line. */
export function descendants(root: number): { pid: number; argv: string[] }[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // ended meanwhile
    }
  }
  const found: { pid: number; argv: string[] }[] = [];
  const below = (pid: number) => {
    for (const [child, ppid] of parent) {
      if (ppid !== pid) continue;
      try {
        found.push({ pid: child, argv: readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0') });
      } catch {
        // ended meanwhile
      }
      below(child);
    }
  };
  below(root);
  return found;
}

/**
 * CPU seconds a process and every process below it have used so far, those still running and those ended:
 * PostgreSQL's postmaster with its backends.
 */
export function treeCpuSeconds(root: number | undefined): number {
  if (!root) return 0;
  return descendants(root).reduce((sum, { pid }) => sum + cpuSeconds(pid), cpuSeconds(root));
}

/** Resident memory of a process in bytes, from /proc. */
export function rssBytes(pid: number | undefined): number {
  if (!pid) return 0;
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** A PostgreSQL server's CPU so far: its whole tree's, and each client backend's with its database. */
export interface PostgresCpu {
  total: number;
  backends: Map<number, { database: string; seconds: number }>;
}

/**
 * The database a PostgreSQL process serves, from the title PostgreSQL gives a client backend
 * (`postgres: user database host(port) activity`, `[local]` for a socket); undefined for the postmaster and
 * its background processes (`postgres: checkpointer`, `postgres: autovacuum worker payments`…).
 */
export function backendDatabase(title: string): string | undefined {
  return /^postgres: \S+ (\S+) (?:\S+\(\d+\)|\[local\])/.exec(title)?.[1];
}

/** Reads a PostgreSQL server's CPU below its postmaster (`postgresCpuBetween` splits it by database). */
export function postgresCpu(postmaster: number | undefined): PostgresCpu {
  const backends = new Map<number, { database: string; seconds: number }>();
  if (!postmaster) return { total: 0, backends };
  let total = cpuSeconds(postmaster);
  for (const { pid, argv } of descendants(postmaster)) {
    const seconds = cpuSeconds(pid);
    total += seconds;
    const database = backendDatabase(argv[0] ?? '');
    if (database !== undefined) backends.set(pid, { database, seconds });
  }
  return { total, backends };
}

/**
 * CPU seconds between two readings, by database: each client backend's, and under `other` the rest (the
 * postmaster, its background processes, backends that ended meanwhile, whose time lands in the
 * postmaster's).
 */
export function postgresCpuBetween(before: PostgresCpu, after: PostgresCpu): Record<string, number> {
  const spent: Record<string, number> = {};
  let attributed = 0;
  for (const [pid, { database, seconds }] of after.backends) {
    const earlier = before.backends.get(pid);
    const used = seconds - (earlier?.database === database ? earlier.seconds : 0);
    spent[database] = (spent[database] ?? 0) + used;
    attributed += used;
  }
  spent['other'] = after.total - before.total - attributed;
  return spent;
}

/** The cores each watched process used while measuring, and its CPU per request: `service 0.90 (21.8 ms)…`. */
export function coresUsed(r: Pick<Measured, 'cores' | 'perSecond'>): string {
  return Object.entries(r.cores)
    .map(([name, cores]) => {
      if (r.perSecond <= 0) return `${name} ${cores.toFixed(2)}`;
      const each = (cores / r.perSecond) * 1000;
      return `${name} ${cores.toFixed(2)} (${each.toFixed(each < 1 ? 3 : 1)} ms)`;
    })
    .join(', ');
}

/** Runs `measure`, reporting how many cores the generator and each watched process used meanwhile. */
export async function withCpu<T>(
  watched: Record<string, number | undefined>,
  measure: () => Promise<T>,
): Promise<{ value: T; seconds: number; generatorCores: number; cores: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(watched).map(([k, pid]) => [k, treeCpuSeconds(pid)]));
  const ownBefore = process.cpuUsage();
  const started = performance.now();
  const value = await measure();
  const seconds = (performance.now() - started) / 1000;
  const own = process.cpuUsage(ownBefore);
  const cores = Object.fromEntries(
    Object.entries(watched).map(([k, pid]) => [k, (treeCpuSeconds(pid) - before[k]!) / seconds]),
  );
  return { value, seconds, generatorCores: (own.user + own.system) / 1e6 / seconds, cores };
}

export interface HttpLoad {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** A fixed body, or one per request (`i` counts from 0 across all connections). */
  body?: string | ((i: number) => string);
  connections: number;
  /** Requests in all, or a duration in seconds. */
  amount?: number;
  duration?: number;
}

/** One autocannon run; latencies in milliseconds. */
export async function http(
  name: string,
  load: HttpLoad,
  watched: Record<string, number | undefined>,
): Promise<Measured> {
  let i = 0;
  const body = load.body;
  const { value, generatorCores, cores } = await withCpu(watched, () =>
    autocannon({
      url: load.url,
      method: load.method ?? 'GET',
      headers: load.headers,
      connections: load.connections,
      pipelining: 1,
      // autocannon notices a run's end at its next sample: at its default of one a second, a run's time
      // was rounded up to whole seconds (400 requests in 0.6 s counted as 1 s), so a rate moved in steps
      // (400 requests: 66.7 or 57.1/s, nothing between).
      sampleInt: 50,
      ...(load.amount ? { amount: load.amount } : { duration: load.duration ?? 10 }),
      ...(typeof body === 'function'
        ? {
            requests: [
              {
                setupRequest: (request: autocannon.Request) => ({ ...request, body: body(i++) }),
              },
            ],
          }
        : body
          ? { body }
          : {}),
    }),
  );
  return {
    name,
    requests: value.requests.total,
    errors: value.errors + value.timeouts + value.non2xx,
    perSecond: value.requests.total / (value.duration || 1),
    p50: value.latency.p50,
    p99: value.latency.p99,
    generatorCores,
    cores,
  };
}

/**
 * Closed-loop clients, each making its next call when the last one answered, until `calls` are made or
 * `deadline` passes: for flows autocannon cannot drive (a hosted-page form, a mix of creates).
 */
export async function closedLoop(
  name: string,
  options: { clients: number; calls?: number; deadline?: number },
  call: (i: number) => Promise<boolean>,
  watched: Record<string, number | undefined>,
): Promise<Measured> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const more = () =>
    (options.calls === undefined || next < options.calls) &&
    (options.deadline === undefined || Date.now() < options.deadline);
  const { seconds, generatorCores, cores } = await withCpu(watched, () =>
    Promise.all(
      Array.from({ length: options.clients }, async () => {
        while (more()) {
          const i = next++;
          const t0 = performance.now();
          if (!(await call(i))) errors += 1;
          latencies.push(performance.now() - t0);
        }
      }),
    ),
  );
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    name,
    requests: latencies.length,
    errors,
    perSecond: latencies.length / seconds,
    p50: at(0.5),
    p99: at(0.99),
    generatorCores,
    cores,
  };
}
