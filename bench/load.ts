// Load generation for `npm run bench`: autocannon for HTTP, with the generator's own CPU and that of the
// processes under test read from /proc, so a result can be told from a saturated machine.
import { readFileSync } from 'node:fs';
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

/** CPU seconds a process has used so far (user + system), from /proc; 0 where /proc is missing. */
export function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Resident memory of a process in bytes, from /proc. */
export function rssBytes(pid: number | undefined): number {
  if (!pid) return 0;
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** Runs `measure`, reporting how many cores the generator and each watched process used meanwhile. */
export async function withCpu<T>(
  watched: Record<string, number | undefined>,
  measure: () => Promise<T>,
): Promise<{ value: T; seconds: number; generatorCores: number; cores: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(watched).map(([k, pid]) => [k, cpuSeconds(pid)]));
  const ownBefore = process.cpuUsage();
  const started = performance.now();
  const value = await measure();
  const seconds = (performance.now() - started) / 1000;
  const own = process.cpuUsage(ownBefore);
  const cores = Object.fromEntries(
    Object.entries(watched).map(([k, pid]) => [k, (cpuSeconds(pid) - before[k]!) / seconds]),
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
