/**
 * `npm run bench:soak`: an hour of steady load on the `npm run dev` stack with every local chain, then idle,
 * watching what each process keeps (docs/capacity.md, "Soak"). Temporal is the production topology's: the
 * real server on PostgreSQL (its own embedded one), not the dev server. The API runs in `npm run dev`'s own
 * process (with LiteSVM, the local Solana) and the worker (with the chain watcher) as a `ROLE=worker` process
 * beside it, so each is measured on its own. At a fixed rate it starts the capacity mix (card, 3-D Secure
 * card, payout, sandbox payin, off-ramp) and a payin on each local chain paid by a real transfer, every one
 * with its webhook; every `SOAK_SAMPLE_SECONDS` it reads each process's memory and CPU time, and the chain
 * watcher's pass totals from the worker's metrics. It prints, per process, the slope of its memory per 1,000
 * transactions after the warm-up and per hour while idle after the load, where the load's slope went (its PSS
 * by kind of page: anonymous, mapped files, shared memory; for the Node processes, the V8 heap and its
 * external memory, from their metrics), and its CPU per transaction in the first and the last window; per
 * chain the deposit-to-webhook p50 in the first and the last window, where that time goes (the deposit seen,
 * the transaction final, the hand-over answered, the webhook) and the watcher's mean pass over the chain's
 * nodes; the Temporal server's Go memory (runtime.MemStats) and goroutines at the idle's start and end, its
 * heap profiles saved for `go tool pprof`; each reconciliation run the service made, its window, time and
 * breaks; then the verdict: every transaction final, webhooks exactly once, nothing doubled, wallets equal to
 * their ledgers, no reconciliation break. Writes `bench/results/soak-<time>.json`; fails when a target is
 * missed.
 *
 * Bounded: `SOAK_MINUTES` of load (60), `SOAK_IDLE_MINUTES` idle (30), `SOAK_RATE` transactions a second (4).
 * The warm-up and the two latency windows are 10 minutes, or a third of a shorter run.
 * The idle's target leaves out its settling the same way: its first 10 minutes, or a third of a shorter idle
 * (`mbPerHourIdleSettled`; `mbPerHourIdle` is the whole idle's, printed beside it).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { freePortRun, startEmbeddedPostgres } from '../../src/dev/postgres';
import { startRealTemporal } from './temporal-server';
import {
  cleanUpAfterAll,
  FaultyReceiver,
  freePorts,
  ready,
  scratchDir,
  serviceSettings,
  ServiceProcess,
  SERVICE_COMMAND,
  until,
  waitReady,
} from '../faults/harness';
import {
  devInstanceIn,
  devSandboxMerchant,
  FLOWS,
  LoadClient,
  loadMerchant,
  type Created,
} from '../faults/load';
import { verify } from '../faults/verdict';
import { cpuSeconds, descendants } from '../../bench/load';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 60);
const IDLE_MINUTES = Number(process.env.SOAK_IDLE_MINUTES ?? 30);
const RATE = Number(process.env.SOAK_RATE ?? 4);
const SAMPLE_SECONDS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 15);
/** The warm-up left out of the memory slopes, and the length of each latency window. */
const WINDOW_MS = Math.min(10, MINUTES / 3) * 60_000;
/**
 * The start of the idle left out of its target's slope (a third of it, at most ten minutes), as the load's
 * warm-up is left out of its own: the load's end settling (caches emptied, pools closed, heaps given back or
 * grown once), not growth.
 */
const IDLE_SETTLING_MS = Math.min(10, IDLE_MINUTES / 3) * 60_000;
/** Transactions under way at most: past it the load waits (and says it fell behind its rate). */
const IN_FLIGHT = 400;
/** The targets (issue 42): memory per 1,000 transactions, idle growth per hour, latency drift. */
const MB_PER_1000 = 5;
const IDLE_MB_PER_HOUR = 5;
const LATENCY_DRIFT = 0.2;

const MB = 1024 * 1024;
/** `npm run dev`'s own process: the API, LiteSVM (the local Solana) and the other chains' pacers. */
const DEV_PROCESS = 'API + LiteSVM (npm run dev)';

const cleanups = cleanUpAfterAll();
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A process's proportional set size in bytes (resident memory, pages shared between processes split among
 * them), and its parts by kind of page (smaps_rollup): anonymous (heaps), mapped files, shared memory.
 */
function pss(pid: number): { total: number; anon: number; file: number; shmem: number } {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0) * 1024;
    return { total: kb('Pss'), anon: kb('Pss_Anon'), file: kb('Pss_File'), shmem: kb('Pss_Shmem') };
  } catch {
    return { total: 0, anon: 0, file: 0, shmem: 0 }; // ended meanwhile
  }
}

/** A Node process's V8 heap (used and reserved) and its external memory (Buffers), from its `/metrics`. */
function nodeHeap(page: string): { used: number; total: number; external: number } | undefined {
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(page)?.[1] ?? Number.NaN);
  const heap = {
    used: value('nodejs_heap_size_used_bytes'),
    total: value('nodejs_heap_size_total_bytes'),
    external: value('nodejs_external_memory_bytes'),
  };
  return Object.values(heap).every(Number.isFinite) ? heap : undefined;
}

/** Least-squares slope of y over x (0 with fewer than two points). */
function slope(points: [number, number][]): number {
  if (points.length < 2) return 0;
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

interface Sample {
  /** Milliseconds since the load began. */
  t: number;
  /** Transactions final so far. */
  final: number;
  idle: boolean;
  mb: Record<string, number>;
  /** Each process group's PSS by kind of page, in MB: what grows when its total does. */
  parts: Record<string, { anon: number; file: number; shmem: number }>;
  /** The Node processes' V8 heap used and reserved, and their external memory (Buffers), in MB. */
  heaps: Record<string, { used: number; total: number; external: number }>;
  /** CPU seconds used so far by each process group (each process's own, and its reaped children's). */
  cpu: Record<string, number>;
  /** How many processes each group has (a PostgreSQL's backends come and go with its clients). */
  processes: Record<string, number>;
  /** The chain watcher's passes so far, by network: their count and seconds in all (the worker's metrics). */
  scans: Record<string, { count: number; seconds: number }>;
  /** What the Temporal server has done so far, from its metrics (undefined when the scrape missed). */
  temporal?: TemporalWork;
}

/**
 * The Temporal server's own work in the service's namespace: timer tasks completed so far by kind (a timer a
 * workflow cancelled, or that outlived its workflow, still comes due and has the workflow's state loaded to
 * be checked); workflow states read from PostgreSQL (its history cache did not hold them, or held them past
 * their time); and the entries that cache holds (`cached`, undefined when the page had no such gauge).
 */
interface TemporalWork {
  timers: Record<string, number>;
  readBack: number;
  cached?: number;
}

/**
 * The Temporal server's work from its Prometheus page (Tally's names, Temporal 1.29). A timer task is counted
 * once it completes (`task_latency_count`), not at each attempt (`task_requests`). Timers only: state
 * machines' and CHASM's timer tasks, which the service's workflows do not use, are named otherwise.
 */
function temporalWork(page: string, namespace: string): TemporalWork | undefined {
  if (!page) return undefined;
  const work: TemporalWork = { timers: {}, readBack: 0 };
  for (const [, name, labels, value] of page.matchAll(/^(\w+)\{([^}]*)\} (\S+)$/gm)) {
    const label = (key: string) => new RegExp(`\\b${key}="([^"]*)"`).exec(labels!)?.[1];
    const operation = label('operation');
    if (name === 'cache_usage') {
      // The replication progress cache shares the tag and the series; with no replication it holds nothing.
      if (label('cache_type') === 'mutablestate' && label('service_name') === 'history')
        work.cached = Number(value);
      continue;
    }
    if (label('namespace') !== namespace) continue;
    if (name === 'task_latency_count' && operation?.startsWith('TimerActiveTask')) {
      const kind = operation.slice('TimerActiveTask'.length);
      work.timers[kind] = (work.timers[kind] ?? 0) + Number(value);
    } else if (name === 'persistence_requests' && operation === 'GetWorkflowExecution') {
      work.readBack += Number(value);
    }
  }
  return work;
}

/** The watcher's pass totals by network, from a `/metrics` page. */
function scanTotals(page: string): Sample['scans'] {
  const scans: Sample['scans'] = {};
  for (const [, part, labels, value] of page.matchAll(
    /^payments_chain_scan_seconds_(sum|count)\{([^}]*)\} (\S+)$/gm,
  )) {
    const network = /network="([^"]+)"/.exec(labels!)?.[1];
    if (!network) continue;
    // The network's nodes of every mode together.
    const totals = (scans[network] ??= { count: 0, seconds: 0 });
    if (part === 'sum') totals.seconds += Number(value);
    else totals.count += Number(value);
  }
  return scans;
}

describe('soak', () => {
  it(
    'keeps memory and chain latency flat through steady load and idle',
    async () => {
      const dir = scratchDir(cleanups);
      const anvilPort = await freePortRun(5);
      const [
        pgPort,
        temporalPgPort,
        apiPort,
        receiverPort,
        btcdPort,
        solanaPort,
        workerPort,
        pprofPort,
        temporalMetricsPort,
      ] = (await freePorts(15))
        .filter((port) => port < anvilPort || port > anvilPort + 4)
        .slice(0, 9) as number[];
      const keys = {
        MASTER_KEY: randomHex(32),
        PAYLOAD_KEYS: `soak:${randomHex(32)}`,
      };
      // The real Temporal server on a PostgreSQL of its own, as production runs it.
      const server = process.env.TEMPORAL_SERVER_PATH;
      const sqlTool = process.env.TEMPORAL_SQL_TOOL_PATH;
      if (!server || !sqlTool)
        throw new Error('Run through `npm run bench:soak`: it builds the Temporal server.');
      const temporalPostgres = await startEmbeddedPostgres({
        dir: join(dir, 'temporal-pg'),
        port: temporalPgPort!,
        database: 'postgres',
        persistent: true,
      });
      cleanups.push(() => temporalPostgres.stop());
      const temporal = await startRealTemporal({
        server,
        sqlTool,
        dir: join(dir, 'temporal'),
        postgresUrl: temporalPostgres.url,
        pprofPort: pprofPort!,
        metricsPort: temporalMetricsPort!,
      });
      cleanups.push(() => temporal.stop());
      const temporalMetricsUrl = `http://127.0.0.1:${temporalMetricsPort}`;
      const pprofUrl = `http://127.0.0.1:${pprofPort}/debug/pprof`;

      const env: NodeJS.ProcessEnv = {
        ...process.env,
        ...serviceSettings,
        ...keys,
        PAYMENTS_DATA_DIR: dir,
        ROLE: 'api',
        PORT: String(apiPort),
        DEV_POSTGRES_PORT: String(pgPort),
        TEMPORAL_ADDRESS: temporal.address,
        DEV_ANVIL_PORT: String(anvilPort),
        DEV_BTCD_PORT: String(btcdPort),
        DEV_SOLANA_PORT: String(solanaPort),
      };
      for (const name of ['DATABASE_URL', 'BASE_URL', 'NODE_ENV']) delete env[name];
      const baseUrl = `http://127.0.0.1:${apiPort}`;
      const dev = new ServiceProcess('npm run dev', [process.execPath, 'scripts/dev.mjs'], env);
      cleanups.push(async () => dev.stop());
      dev.start();
      await until('npm run dev to be ready', ready(baseUrl), 300_000, () => dev.ended).catch(
        (error: Error) => {
          throw new Error(`${error.message}; its output:\n${dev.log}`);
        },
      );
      const instance = devInstanceIn(dir);
      const worker = new ServiceProcess('worker', SERVICE_COMMAND, {
        ...env,
        ROLE: 'worker',
        METRICS_PORT: String(workerPort),
        DATABASE_URL: instance.database_url,
        TEMPORAL_ADDRESS: instance.temporal_address,
        BASE_URL: baseUrl,
        // As npm run dev runs its own service: its sandbox merchant has live terminals on sandbox connectors.
        ALLOW_SANDBOX_IN_LIVE: 'true',
      });
      cleanups.push(async () => worker.stop());
      worker.start();
      await waitReady(`http://127.0.0.1:${workerPort}`, worker);

      const receiver = new FaultyReceiver(receiverPort!);
      await receiver.start();
      cleanups.push(() => receiver.close());
      const sandbox = devSandboxMerchant(dir);
      const client = new LoadClient(() => baseUrl, loadMerchant(sandbox), receiver.url);

      // The local chains npm run dev registered, and which process serves each (by its RPC port).
      const db = new pg.Pool({ connectionString: instance.database_url, max: 2 });
      cleanups.push(() => db.end());
      const { rows: nodes } = await db.query<{
        network: string;
        rpc_url: string;
        tokens: Record<string, string>;
      }>(`select network, rpc_url, tokens from chain_nodes where mode = 'test' and active order by network`);
      const chains = nodes.map((n) => ({
        network: n.network,
        currency: Object.keys(n.tokens).includes('USDT') ? 'USDT' : (Object.keys(n.tokens)[0] ?? 'BTC'),
        port: new URL(n.rpc_url).port,
      }));
      expect(chains.map((c) => c.network)).toEqual(
        expect.arrayContaining(['BITCOIN', 'ETHEREUM', 'SOLANA', 'TRON']),
      );
      const processes = (): Record<string, number[]> => {
        const named: Record<string, number[]> = { worker: [worker.pid!], 'Temporal server': [] };
        const add = (name: string, pid: number) => (named[name] ??= []).push(pid);
        if (temporal.server.pid) add('Temporal server', temporal.server.pid);
        const postmaster = descendants(process.pid).find(
          ({ argv }) => /\bpostgres$/.test(argv[0]!) && argv.includes(join(dir, 'temporal-pg')),
        );
        if (postmaster)
          for (const { pid } of [postmaster, ...descendants(postmaster.pid)])
            add("Temporal's PostgreSQL", pid);
        for (const { pid, argv } of descendants(dev.pid!)) {
          const line = argv.join(' ');
          if (line.includes('src/dev/index.ts')) add(DEV_PROCESS, pid);
          else if (/\bpostgres\b/.test(argv[0]!)) add('PostgreSQL', pid);
          else if (/anvil|btcd/.test(argv[0]!)) {
            const chain = chains.find(
              (c) => line.includes(`--port ${c.port}`) || line.includes(`:${c.port}`),
            );
            add(chain ? `${chain.network} node` : `chain node (${argv[0]})`, pid);
          }
        }
        return named;
      };
      process.stdout.write(
        `[soak] ${MINUTES} min at ${RATE}/s, then ${IDLE_MINUTES} min idle; chains ${chains
          .map((c) => `${c.network} ${c.currency}`)
          .join(', ')}; processes ${JSON.stringify(processes())}\n`,
      );

      // The load: one start every 1/RATE s, cycling through the capacity mix and a payin on each chain.
      const kinds = [...FLOWS.map((flow) => ({ flow })), ...chains.map((chain) => ({ chain }))];
      const created: Created[] = [];
      const paid = new Map<string, { network: string; paidAt: number }>();
      const failures: string[] = [];
      let inFlight = 0;
      let behind = 0;
      let finalCount = 0;
      const samples: Sample[] = [];
      const began = Date.now();
      let idle = false;
      const sample = async () => {
        const { rows } = await db.query<{ n: number }>(
          `select count(*)::int as n from transactions where status in ('SUCCESS', 'FAILED', 'BLOCKED')`,
        );
        finalCount = rows[0]!.n;
        const mb: Record<string, number> = {};
        const cpu: Record<string, number> = {};
        const parts: Sample['parts'] = {};
        const counts: Record<string, number> = {};
        for (const [name, pids] of Object.entries(processes())) {
          counts[name] = pids.length;
          const part = { anon: 0, file: 0, shmem: 0 };
          let total = 0;
          for (const pid of pids) {
            const p = pss(pid);
            total += p.total / MB;
            part.anon += p.anon / MB;
            part.file += p.file / MB;
            part.shmem += p.shmem / MB;
          }
          mb[name] = total;
          parts[name] = part;
          cpu[name] = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
        }
        const own = process.cpuUsage();
        cpu['the load (this process)'] = (own.user + own.system) / 1e6;
        // A missed scrape leaves this sample without the watcher's totals or that process's heap.
        const scrape = (url: string) =>
          fetch(`${url}/metrics`).then(
            (r) => (r.ok ? r.text() : ''),
            () => '',
          );
        const [workerPage, apiPage, temporalPage] = await Promise.all([
          scrape(`http://127.0.0.1:${workerPort}`),
          scrape(baseUrl),
          scrape(temporalMetricsUrl),
        ]);
        const heaps: Sample['heaps'] = {};
        for (const [name, page] of [
          ['worker', workerPage],
          [DEV_PROCESS, apiPage],
        ] as const) {
          const heap = nodeHeap(page);
          if (heap)
            heaps[name] = { used: heap.used / MB, total: heap.total / MB, external: heap.external / MB };
        }
        samples.push({
          t: Date.now() - began,
          final: finalCount,
          idle,
          mb,
          parts,
          heaps,
          cpu,
          processes: counts,
          scans: scanTotals(workerPage),
          // The namespace startRealTemporal registers, the service's.
          temporal: temporalWork(temporalPage, 'default'),
        });
      };
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          await sample().catch((error: unknown) => failures.push(`sample: ${String(error)}`));
          await pause(SAMPLE_SECONDS * 1000);
        }
      })();
      const started: Promise<void>[] = [];
      for (let n = 0; Date.now() - began < MINUTES * 60_000; n++) {
        const due = began + (n * 1000) / RATE;
        if (due > Date.now()) await pause(due - Date.now());
        if (inFlight >= IN_FLIGHT) {
          behind += 1;
          while (inFlight >= IN_FLIGHT) await pause(50);
        }
        const kind = kinds[n % kinds.length]!;
        inFlight += 1;
        started.push(
          (async () => {
            try {
              if ('flow' in kind) created.push(await client.run(kind.flow, n));
              else {
                const done = await client.payOnChain(kind.chain.network, kind.chain.currency, n);
                created.push(done);
                paid.set(done.transactionId, { network: kind.chain.network, paidAt: done.paidAt });
              }
            } catch (error) {
              failures.push(`${'flow' in kind ? kind.flow : kind.chain.network} ${n}: ${String(error)}`);
            } finally {
              inFlight -= 1;
            }
          })(),
        );
      }
      await Promise.all(started);
      const loadEnded = Date.now() - began;
      const verdict = await verify(instance.database_url, created, receiver, sandbox.merchant_id);
      const allFinal = Date.now() - began;

      // Idle: nothing more is sent; the chains' pacers, the watcher and the maintenance jobs go on.
      idle = true;
      const profiles = mkdtempSync(join(tmpdir(), 'payments-soak-profiles-'));
      const goAt = (name: string) =>
        goMemory(pprofUrl, join(profiles, `temporal-heap-${name}.pb.gz`)).catch((error: unknown) => {
          failures.push(`the Temporal server's pprof: ${String(error)}`);
          return undefined;
        });
      const goAtIdle = await goAt('idle-start');
      await pause(IDLE_MINUTES * 60_000);
      sampling = false;
      await sampler;
      await sample();
      const goAtEnd = await goAt('idle-end');
      const reconciliation = await reconciliationRuns(db);
      const tables = await tableSizes(db, created.length);
      const temporalWorkByWindow = temporalWindows(samples, loadEnded);

      // Memory: per process, its slope over the transactions made final after the warm-up, and over time idle.
      const names = [...new Set(samples.flatMap((s) => Object.keys(s.mb)))];
      const loaded = samples.filter((s) => !s.idle && s.t >= WINDOW_MS && s.t <= loadEnded);
      const rested = samples.filter((s) => s.idle);
      const idleFrom = rested[0]?.t ?? 0;
      const idleTo = rested.at(-1)?.t ?? 0;
      const memory = Object.fromEntries(
        names.map((name) => {
          const perThousand = slope(loaded.map((s) => [s.final / 1000, s.mb[name] ?? 0]));
          /** MB an hour over the idle's samples from `from` (ms since the load began) on. */
          const perHourFrom = (from: number) =>
            slope(rested.filter((s) => s.t >= from).map((s) => [s.t / 3_600_000, s.mb[name] ?? 0]));
          // Over the whole idle, the settling included.
          const perHour = perHourFrom(idleFrom);
          // The target's: past the idle's settling. A one-off step is no growth, and a fit over minutes cannot
          // tell a swing from a trend: in a 15-minute idle (2026-12-06), the Temporal server's 12 MB in its first
          // minute read as 13 MB an hour, and the anvils' swings of 5-10 MB read as -16 to +64 over its last
          // ten. So the idle is 30 minutes by default, and its target's slope is fitted over the rest of it.
          const perHourSettled = perHourFrom(idleFrom + IDLE_SETTLING_MS);
          // And over the idle's last 15 minutes: whether what grew once the load stopped has stopped growing.
          const perHourLast = perHourFrom(idleTo - 15 * 60_000);
          // Where the load's slope went: each kind of page, and a Node process's heap and external memory.
          const partSlope = (of: (s: Sample) => number | undefined) => {
            const points = loaded.flatMap((s): [number, number][] => {
              const y = of(s);
              return y === undefined ? [] : [[s.final / 1000, y]];
            });
            return points.length < 2 ? undefined : round(slope(points));
          };
          const parts = {
            anon: partSlope((s) => s.parts[name]?.anon),
            file: partSlope((s) => s.parts[name]?.file),
            shmem: partSlope((s) => s.parts[name]?.shmem),
            heapUsed: partSlope((s) => s.heaps[name]?.used),
            heapTotal: partSlope((s) => s.heaps[name]?.total),
            external: partSlope((s) => s.heaps[name]?.external),
          };
          const first = samples.find((s) => s.mb[name] !== undefined)?.mb[name] ?? 0;
          const last = samples.at(-1)?.mb[name] ?? 0;
          return [
            name,
            {
              mbPer1000Transactions: round(perThousand),
              mbPerHourIdle: round(perHour),
              mbPerHourIdleSettled: round(perHourSettled),
              mbPerHourIdleLast15Minutes: round(perHourLast),
              firstMb: round(first),
              lastMb: round(last),
              mbPer1000ByPart: parts,
              met: perThousand <= MB_PER_1000 && perHourSettled <= IDLE_MB_PER_HOUR,
            },
          ];
        }),
      );

      /** The first and the last sample taken under load in a window. */
      const windowEnds = (from: number, to: number) => {
        const inside = samples.filter((s) => !s.idle && s.t >= from && s.t <= to);
        return [inside[0], inside.at(-1)] as const;
      };
      // CPU per transaction made final, per process, in the first window of the load against the last: what
      // grows when the chains' latency drifts.
      const during = (from: number, to: number) => {
        const [a, b] = windowEnds(from, to);
        return (name: string) =>
          a && b && b.final > a.final
            ? (((b.cpu[name] ?? 0) - (a.cpu[name] ?? 0)) * 1000) / (b.final - a.final)
            : 0;
      };
      const firstCpu = during(0, WINDOW_MS);
      const lastCpu = during(loadEnded - WINDOW_MS, loadEnded);
      const cpuNames = [...new Set(samples.flatMap((s) => Object.keys(s.cpu)))];
      const cpu = Object.fromEntries(
        [...cpuNames, 'all'].map((name) => {
          const of = (at: (n: string) => number) =>
            name === 'all' ? cpuNames.reduce((sum, n) => sum + at(n), 0) : at(name);
          const [first, last] = [of(firstCpu), of(lastCpu)];
          return [name, { firstMsPerTransaction: round(first), lastMsPerTransaction: round(last) }];
        }),
      );

      // Chain latency: deposit sent to its SUCCESS webhook acknowledged, first window against the last.
      const webhookAt = new Map<string, number>();
      for (const a of receiver.acknowledged)
        if (a.status === 'SUCCESS' && !webhookAt.has(a.transactionId)) webhookAt.set(a.transactionId, a.at);
      // Where it goes: the deposit seen by the watcher, the transaction final, the hand-over's answer (the
      // workflow's update returned; each from the service's database, in milliseconds after the deposit was
      // sent), and the webhook acknowledged.
      const { rows: stages } = await db.query<{ id: string; seen: string; handed: string; final: string }>(
        `select t.id,
                (extract(epoch from min(c.created_at)) * 1000)::bigint::text as seen,
                (extract(epoch from min(c.handed_over_at)) * 1000)::bigint::text as handed,
                (extract(epoch from min(t.updated_at)) * 1000)::bigint::text as final
           from transactions t join chain_transfers c on c.transaction_id = t.id
          where t.id = any($1::text[])
          group by t.id`,
        [[...paid.keys()]],
      );
      const stageOf = new Map(stages.map((r) => [r.id, r]));
      const breakdown = (network: string, from: number, to: number) => {
        const inWindow = [...paid.entries()].filter(
          ([, p]) => p.network === network && p.paidAt - began >= from && p.paidAt - began < to,
        );
        const p50 = (at: (id: string, paidAt: number) => number) =>
          median(inWindow.map(([id, p]) => at(id, p.paidAt)).filter((ms) => Number.isFinite(ms)));
        const stage = (key: 'seen' | 'handed' | 'final') => (id: string, paidAt: number) =>
          Number(stageOf.get(id)?.[key] ?? Number.NaN) - paidAt;
        return {
          seenMs: p50(stage('seen')),
          handedOverMs: p50(stage('handed')),
          finalMs: p50(stage('final')),
          webhookMs: p50((id, paidAt) => (webhookAt.get(id) ?? Number.NaN) - paidAt),
        };
      };
      // The watcher's mean pass over each chain's nodes in a window (a network with no pass yet at the
      // window's start counts from zero).
      const meanPass = (network: string, from: number, to: number) => {
        const [start, end] = windowEnds(from, to);
        const a = start && (start.scans[network] ?? { count: 0, seconds: 0 });
        const b = end?.scans[network];
        return a && b && b.count > a.count
          ? Math.round(((b.seconds - a.seconds) * 1000) / (b.count - a.count))
          : undefined;
      };
      const latency = Object.fromEntries(
        chains.map(({ network }) => {
          const firstStages = breakdown(network, 0, WINDOW_MS);
          const lastStages = breakdown(network, loadEnded - WINDOW_MS, loadEnded);
          const [first, last] = [firstStages.webhookMs, lastStages.webhookMs];
          const drift = first && last ? last / first - 1 : undefined;
          return [
            network,
            {
              payins: [...paid.values()].filter((p) => p.network === network).length,
              firstP50Ms: first,
              lastP50Ms: last,
              drift: drift === undefined ? undefined : round(drift),
              met: drift !== undefined && drift <= LATENCY_DRIFT,
              firstStages,
              lastStages,
              firstPassMs: meanPass(network, 0, WINDOW_MS),
              lastPassMs: meanPass(network, loadEnded - WINDOW_MS, loadEnded),
            },
          ];
        }),
      );

      const result = {
        minutes: MINUTES,
        idleMinutes: IDLE_MINUTES,
        rate: RATE,
        transactions: created.length,
        achievedRate: round(created.length / (loadEnded / 1000)),
        fellBehind: behind,
        secondsUntilAllFinal: round((allFinal - loadEnded) / 1000),
        failures,
        verdict: { ...verdict, notFinal: verdict.notFinal.slice(0, 20) },
        memory,
        cpu,
        latency,
        temporalGo: { idleStart: goAtIdle, idleEnd: goAtEnd, profiles },
        reconciliation,
        tables,
        temporalWork: temporalWorkByWindow,
        samples,
      };
      mkdirSync('bench/results', { recursive: true });
      const file = `bench/results/soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
      writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
      process.stdout.write(
        [
          '',
          `[soak] ${created.length} transactions in ${MINUTES} min (${result.achievedRate}/s, ${behind} starts late), all final ${result.secondsUntilAllFinal} s after the load; ${failures.length} failed requests`,
          `[soak] verdict: ${JSON.stringify({ ...verdict, notFinal: verdict.notFinal.length })}`,
          '',
          `| Process | MB first → last | MB per 1,000 transactions (after the warm-up) | MB per hour idle, after its first ${round(IDLE_SETTLING_MS / 60_000)} min | The whole idle | Its last 15 min | Met |`,
          '|---|---|---|---|---|---|---|',
          ...Object.entries(memory).map(
            ([name, m]) =>
              `| ${name} | ${m.firstMb} → ${m.lastMb} | ${m.mbPer1000Transactions} | ${m.mbPerHourIdleSettled} | ${m.mbPerHourIdle} | ${m.mbPerHourIdleLast15Minutes} | ${m.met ? 'yes' : 'no'} |`,
          ),
          '',
          '| Process | MB per 1,000 transactions by kind of page: anonymous, files, shared | V8 heap used, reserved; external (Buffers) |',
          '|---|---|---|',
          ...Object.entries(memory).map(([name, m]) => {
            const p = m.mbPer1000ByPart;
            const list = (values: (number | undefined)[]) => values.map((v) => v ?? '-').join(', ');
            return `| ${name} | ${list([p.anon, p.file, p.shmem])} | ${list([p.heapUsed, p.heapTotal])}; ${p.external ?? '-'} |`;
          }),
          '',
          '| Process | CPU ms per transaction, first window | Last window |',
          '|---|---|---|',
          ...Object.entries(cpu).map(
            ([name, c]) => `| ${name} | ${c.firstMsPerTransaction} | ${c.lastMsPerTransaction} |`,
          ),
          '',
          '| Chain | Payins | Deposit to webhook p50, first window | Last window | Drift | Met |',
          '|---|---|---|---|---|---|',
          ...Object.entries(latency).map(
            ([network, l]) =>
              `| ${network} | ${l.payins} | ${l.firstP50Ms ?? '-'} ms | ${l.lastP50Ms ?? '-'} ms | ${l.drift === undefined ? '-' : `${Math.round(l.drift * 100)} %`} | ${l.met ? 'yes' : 'no'} |`,
          ),
          '',
          '| Chain | p50 ms after the deposit, first window: seen, final, hand-over answered, webhook | Last window | Watcher pass, mean ms: first, last |',
          '|---|---|---|---|',
          ...Object.entries(latency).map(([network, l]) => {
            const row = (b: ReturnType<typeof breakdown>) =>
              [b.seenMs, b.finalMs, b.handedOverMs, b.webhookMs].map((ms) => ms ?? '-').join(', ');
            return `| ${network} | ${row(l.firstStages)} | ${row(l.lastStages)} | ${l.firstPassMs ?? '-'}, ${l.lastPassMs ?? '-'} |`;
          }),
          '',
          "| The Temporal server's Go memory, MB | Idle start | Idle end |",
          '|---|---|---|',
          ...Object.keys(goAtEnd ?? goAtIdle ?? {}).map(
            (name) => `| ${name} | ${goAtIdle?.[name] ?? '-'} | ${goAtEnd?.[name] ?? '-'} |`,
          ),
          `(heap profiles in ${profiles}: \`go tool pprof -top -diff_base <start> <end>\`)`,
          '',
          ...temporalWorkTable(temporalWorkByWindow),
          '',
          '| Reconciliation run | Window | Seconds | Breaks found (new) |',
          '|---|---|---|---|',
          ...reconciliation.map(
            (r) =>
              `| ${r.startedAt} | ${r.window} | ${r.seconds ?? 'unfinished'} | ${r.found} (${r.opened}) |`,
          ),
          '',
          "| The service's table | KB (rows, indexes) | KB per transaction | A live row's mean bytes | Rows inserted | Updated (HOT) | Dead rows |",
          '|---|---|---|---|---|---|---|',
          ...tables.map(
            (t) =>
              `| ${t.table} | ${t.kb} (${t.heapKb}, ${t.indexesKb}) | ${t.kbPerTransaction} | ${t.rowBytes} | ${t.inserted} | ${t.updated} (${t.hotUpdated}) | ${t.dead} |`,
          ),
          '',
          `results: ${file}`,
          '',
        ].join('\n'),
      );
      if (failures.length > 0)
        process.stdout.write(`[soak] failures:\n${failures.slice(0, 20).join('\n')}\n`);

      expect(failures).toEqual([]);
      expect(verdict.notFinal).toEqual([]);
      // Reconciliation finds nothing wrong in a run where nothing went wrong, and every run finished but one
      // begun in the last five minutes: one stuck retrying a failed read has found nothing either.
      expect(reconciliation.filter((r) => r.found > 0 || r.unfinishedForMs > 5 * 60_000)).toEqual([]);
      expect(verdict.lost + verdict.duplicatedEffects + verdict.walletsOff + verdict.webhooksMissing).toBe(0);
      expect(Object.entries(memory).filter(([, m]) => !m.met)).toEqual([]);
      expect(Object.entries(latency).filter(([, l]) => !l.met)).toEqual([]);
    },
    (MINUTES + IDLE_MINUTES + 30) * 60_000,
  );
});

/**
 * The Temporal server's Go memory from its pprof (runtime.MemStats, in MB) and its goroutines, with its heap
 * profile saved to `file`: whether what its PSS gains while idle is live heap, or heap Go has not given back.
 */
async function goMemory(pprofUrl: string, file: string): Promise<Record<string, number>> {
  const ok = (r: Response) => {
    if (!r.ok) throw new Error(`pprof answered ${r.status}`);
    return r;
  };
  const [stats, goroutines, profile] = await Promise.all([
    fetch(`${pprofUrl}/heap?debug=1`).then((r) => ok(r).text()),
    fetch(`${pprofUrl}/goroutine?debug=1`).then((r) => ok(r).text()),
    fetch(`${pprofUrl}/heap`).then((r) => ok(r).arrayBuffer()),
  ]);
  writeFileSync(file, Buffer.from(profile));
  const memory: Record<string, number> = {};
  // `# Stack = inuse / sys`: the first is the stacks in use.
  for (const [name, field] of [
    ['Sys', 'Sys'],
    ['HeapSys', 'HeapSys'],
    ['HeapInuse', 'HeapInuse'],
    ['HeapIdle', 'HeapIdle'],
    ['HeapReleased', 'HeapReleased'],
    ['HeapAlloc', 'HeapAlloc'],
    ['StackInuse', 'Stack'],
  ] as const) {
    const value = new RegExp(`^# ${field} = (\\d+)`, 'm').exec(stats)?.[1];
    if (value !== undefined) memory[name] = round(Number(value) / MB);
  }
  const count = /goroutine profile: total (\d+)/.exec(goroutines)?.[1];
  if (count !== undefined) memory.goroutines = Number(count);
  return memory;
}

/**
 * The Temporal server's work a minute in the load after its warm-up, the idle's first minutes and the rest of
 * the idle, and its history cache's entries at each one's end: whether it was still at work while "idle".
 */
function temporalWindows(samples: Sample[], loadEnded: number) {
  const idleStart = samples.find((s) => s.idle)?.t ?? loadEnded;
  const idleEnd = samples.at(-1)?.t ?? idleStart;
  const windows: [string, number, number][] = [
    ['Load, after its warm-up', WINDOW_MS, loadEnded],
    [`Idle, its first ${round(IDLE_SETTLING_MS / 60_000)} min`, idleStart, idleStart + IDLE_SETTLING_MS],
    ['Idle, after them', idleStart + IDLE_SETTLING_MS, idleEnd],
  ];
  return windows.flatMap(([window, from, to]) => {
    const inside = samples.filter((s) => s.temporal && s.t >= from && s.t <= to);
    const [a, b] = [inside[0], inside.at(-1)];
    if (!a?.temporal || !b?.temporal || b.t <= a.t) return [];
    const minutes = (b.t - a.t) / 60_000;
    const rate = (before: number, after: number) => round((after - before) / minutes);
    const kinds = new Set([...Object.keys(a.temporal.timers), ...Object.keys(b.temporal.timers)]);
    return [
      {
        window,
        minutes: round(minutes),
        timers: Object.fromEntries(
          [...kinds].map((k) => [k, rate(a.temporal!.timers[k] ?? 0, b.temporal!.timers[k] ?? 0)]),
        ),
        readBack: rate(a.temporal.readBack, b.temporal.readBack),
        cachedAtEnd: b.temporal.cached,
      },
    ];
  });
}

function temporalWorkTable(windows: ReturnType<typeof temporalWindows>): string[] {
  if (windows.length === 0) return ["(the Temporal server's metrics were not read: no table of its work)"];
  const kinds = [...new Set(windows.flatMap((w) => Object.keys(w.timers)))].sort();
  const row = (name: string, of: (w: (typeof windows)[number]) => number | undefined) =>
    `| ${name} | ${windows.map((w) => of(w) ?? '-').join(' | ')} |`;
  return [
    `| The Temporal server's work, a minute | ${windows.map((w) => `${w.window} (${w.minutes} min)`).join(' | ')} |`,
    `|---|${windows.map(() => '---|').join('')}`,
    ...kinds.map((kind) => row(`Timer tasks: ${kind}`, (w) => w.timers[kind] ?? 0)),
    row('Workflow states read from PostgreSQL', (w) => w.readBack),
    row('History cache entries at its end (not a rate)', (w) => w.cachedAtEnd),
  ];
}

/** The service's reconciliation runs: each one's window, how long it took and what it found. */
async function reconciliationRuns(db: pg.Pool) {
  const { rows } = await db.query<{
    started_at: Date;
    window_start: Date;
    window_end: Date;
    seconds: number | null;
    summary: Record<string, { found: number; opened: number }> | null;
    unfinished_ms: number | null;
  }>(`select started_at, window_start, window_end, summary,
        extract(epoch from finished_at - started_at)::float as seconds,
        case when finished_at is null then extract(epoch from now() - started_at)::float * 1000 end
          as unfinished_ms
      from reconciliation_runs order by started_at`);
  const time = (date: Date) => date.toISOString().slice(11, 19);
  return rows.map((r) => {
    const sources = Object.values(r.summary ?? {});
    return {
      startedAt: time(r.started_at),
      window: `${time(r.window_start)} to ${time(r.window_end)}`,
      ...(r.seconds === null ? {} : { seconds: round(r.seconds) }),
      unfinishedForMs: r.unfinished_ms ?? 0,
      found: sources.reduce((sum, s) => sum + s.found, 0),
      opened: sources.reduce((sum, s) => sum + s.opened, 0),
    };
  });
}

/**
 * What each of the service's tables holds at the end, per transaction: the pages its PostgreSQL's buffer pool
 * fills as the load goes on (its shared memory's slope), and how many updates stayed on their page (HOT).
 */
async function tableSizes(db: pg.Pool, transactions: number) {
  const { rows } = await db.query<{
    table: string;
    bytes: string;
    heap: string;
    indexes: string;
    inserted: string;
    updated: string;
    hot_updated: string;
    dead: string;
  }>(`select relname as table, pg_total_relation_size(relid)::text as bytes,
        pg_relation_size(relid)::text as heap, pg_indexes_size(relid)::text as indexes, n_tup_ins::text as inserted,
        n_tup_upd::text as updated, n_tup_hot_upd::text as hot_updated, n_dead_tup::text as dead
      from pg_stat_user_tables where schemaname = 'public' order by pg_total_relation_size(relid) desc`);
  const large = rows.filter((r) => Number(r.bytes) > 64 * 1024);
  // A live row's mean size, what a table needs per row however well its pages are kept.
  const rowBytes = new Map<string, number>();
  for (const r of large) {
    const { rows: mean } = await db.query<{ bytes: number | null }>(
      `select avg(pg_column_size(x.*))::int as bytes from public."${r.table.replaceAll('"', '""')}" x`,
    );
    rowBytes.set(r.table, mean[0]?.bytes ?? 0);
  }
  return large.map((r) => ({
    table: r.table,
    rowBytes: rowBytes.get(r.table) ?? 0,
    kb: Math.round(Number(r.bytes) / 1024),
    kbPerTransaction: transactions > 0 ? round(Number(r.bytes) / 1024 / transactions) : 0,
    heapKb: Math.round(Number(r.heap) / 1024),
    indexesKb: Math.round(Number(r.indexes) / 1024),
    inserted: Number(r.inserted),
    updated: Number(r.updated),
    hotUpdated: Number(r.hot_updated),
    dead: Number(r.dead),
  }));
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}
