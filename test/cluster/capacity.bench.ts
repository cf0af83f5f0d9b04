/**
 * `npm run bench:capacity`: what the production topology does on this machine, the measurements behind
 * docs/capacity.md. On a real Temporal server on PostgreSQL, one `ROLE=api` process and first one, then
 * two `ROLE=worker` processes run a bounded mixed load (every flow in turn: card, 3-D Secure card, payout,
 * payin, off-ramp, each with its webhook); each phase reports transactions per second until all are final,
 * the CPU each process used per transaction, and the memory per transaction left waiting on a hosted page.
 * Writes `bench/results/capacity-<time>.json`. Not part of `npm test`: it measures, it does not judge.
 *
 * `CAPACITY_PROFILE=1` also profiles each phase: every Node process writes V8 CPU profiles of its threads
 * when it stops, and the Temporal server's Go pprof samples `CAPACITY_PROFILE_SECONDS` (20) of the measured
 * load; both go to `bench/results/profile-<time>/<phase>/`, summarised with `bench/profiles.ts` and
 * `go tool pprof -top` (bench/README.md, "Where a transaction's CPU goes").
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresCpu, postgresCpuBetween, rssBytes, treeCpuSeconds } from '../../bench/load';
import { cleanUpAfterAll, FaultyReceiver, freePorts, startRoles } from '../faults/harness';
import { LoadClient, loadMerchant, type Created } from '../faults/load';
import { runLoad, verify } from '../faults/verdict';
import { startClusterStack, type ClusterStack } from './stack';

/**
 * Transactions run before the measured ones, not counted: fresh processes spend their first few hundred
 * on start-up work (the JIT tiering up the hot paths, modules loaded on first use, connections opened,
 * statements prepared), which a transaction of a process that has been running does not pay. After 10,
 * 200 measured transactions cost the worker about a quarter more CPU than after 300; after 1,000 the same
 * as after 300 (bench/README.md, "A steady state measured").
 */
const WARM_UP = Number(process.env.CAPACITY_WARM_UP ?? 300);
const TRANSACTIONS = Number(process.env.CAPACITY_TRANSACTIONS ?? 500);
const CONCURRENCY = Number(process.env.CAPACITY_CONCURRENCY ?? 8);
const WAITING = Number(process.env.CAPACITY_WAITING ?? 500);
const WORKERS = (process.env.CAPACITY_WORKERS ?? '1,2').split(',').map(Number);
const PROFILE = process.env.CAPACITY_PROFILE === '1';
const PROFILE_SECONDS = Number(process.env.CAPACITY_PROFILE_SECONDS ?? 20);
const stamp = new Date().toISOString().replace(/[:.]/g, '-');

const cleanups = cleanUpAfterAll();
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** CPU time the whole machine spent busy so far, in seconds (every core), from /proc/stat. */
function machineBusySeconds(): number {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) / 100;
}

/** Samples the Go server's CPU for PROFILE_SECONDS through its pprof endpoint into `file`. */
async function goProfile(pprofUrl: string, file: string): Promise<void> {
  const response = await fetch(`${pprofUrl}/profile?seconds=${PROFILE_SECONDS}`);
  if (!response.ok) throw new Error(`pprof answered ${response.status}`);
  writeFileSync(file, Buffer.from(await response.arrayBuffer()));
}

async function waitAllFinal(databaseUrl: string, ids: string[], timeoutMs: number): Promise<number> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await db.query<{ open: string }>(
        `select count(*) as open from transactions where id = any($1) and status not in ('SUCCESS', 'FAILED', 'BLOCKED')`,
        [ids],
      );
      const open = Number(rows[0]!.open);
      if (open === 0 || Date.now() > deadline) return open;
      await pause(100);
    }
  } finally {
    await db.end();
  }
}

interface Phase {
  workers: number;
  transactions: number;
  seconds: number;
  perSecond: number;
  notFinal: number;
  lost: number;
  doubled: number;
  webhooksMissing: number;
  /** CPU milliseconds per transaction, by process (`api`, `worker 1`…, `temporal`) and for the machine. */
  cpuMsPerTransaction: Record<string, number>;
  waiting: number;
  /** Resident memory added per waiting transaction, by process, in KB. */
  kbPerWaiting: Record<string, number>;
}

/**
 * PostgreSQL's CPU by whose database its backends served: the service's (`serviceDatabase`), Temporal's
 * (`temporal`, `temporal_visibility`), and the rest (the postmaster, background work, backends that ended
 * meanwhile).
 */
function postgresByOwner(
  byDatabase: Record<string, number>,
  serviceDatabase: string,
): Record<string, number> {
  const owned = { 'postgres: service': 0, 'postgres: Temporal': 0, 'postgres: other': 0 };
  for (const [database, seconds] of Object.entries(byDatabase)) {
    if (database === serviceDatabase) owned['postgres: service'] += seconds;
    else if (database.startsWith('temporal')) owned['postgres: Temporal'] += seconds;
    else owned['postgres: other'] += seconds;
  }
  return owned;
}

async function phase(stack: ClusterStack, workerCount: number, tag: string): Promise<Phase> {
  const ports = await freePorts(2 + workerCount);
  const [apiPort, receiverPort, ...workerPorts] = ports;
  const stops: (() => Promise<void>)[] = [];
  const env = { ...stack.env, BASE_URL: `http://127.0.0.1:${apiPort}` };
  const profiles = PROFILE ? join('bench/results', `profile-${stamp}`, `${workerCount}-workers`) : undefined;
  if (profiles) mkdirSync(profiles, { recursive: true });
  const roles = startRoles(
    env,
    { api: [apiPort!], worker: workerPorts },
    (stop) => stops.push(stop),
    profiles ? { cpuProfileDir: profiles } : {},
  );
  try {
    await roles.ready();
    const receiver = new FaultyReceiver(receiverPort!);
    await receiver.start();
    stops.push(() => receiver.close());
    const client = new LoadClient(() => roles.apiUrls[0]!, loadMerchant(stack.credentials), receiver.url);
    const processes = {
      api: () => roles.apis[0]!.pid,
      ...Object.fromEntries(roles.workers.map((w, i) => [`worker ${i + 1}`, () => w.pid])),
      temporal: stack.temporalPid,
    } as Record<string, () => number | undefined>;
    const cpu = () => ({
      seconds: {
        ...Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, treeCpuSeconds(pid())])),
        machine: machineBusySeconds(),
      } as Record<string, number>,
      // The PostgreSQL both use, split by database (bench/load.ts).
      postgres: postgresCpu(stack.postgresPid()),
    });

    // Warm-up (WARM_UP): the processes' start-up work, not counted.
    const warm: Created[] = [];
    await runLoad(client, WARM_UP, CONCURRENCY, warm, async () => undefined);
    await waitAllFinal(
      stack.databaseUrl,
      warm.map((c) => c.transactionId),
      120_000,
    );

    const created: Created[] = [];
    const cpuBefore = cpu();
    const started = performance.now();
    const serverProfile =
      profiles && stack.pprofUrl ? goProfile(stack.pprofUrl, join(profiles, 'temporal.pprof')) : undefined;
    // Awaited after the load; until then a failure must not surface as an unhandled rejection.
    serverProfile?.catch(() => undefined);
    await runLoad(client, TRANSACTIONS, CONCURRENCY, created, async () => undefined);
    const notFinal = await waitAllFinal(
      stack.databaseUrl,
      created.map((c) => c.transactionId),
      300_000,
    );
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = cpu();
    await serverProfile;
    const verdict = await verify(stack.databaseUrl, created, receiver, stack.credentials.merchant_id);

    // PostgreSQL's memory is shared buffers and its backends', which one process's resident size does not
    // tell: only the service's and Temporal's processes are counted.
    const rss = () =>
      Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, rssBytes(pid())]));
    const rssBefore = rss();
    const left: Promise<Created>[] = [];
    for (let n = 0; n < WAITING; n += 1) {
      left.push(client.leaveWaiting(n + workerCount * 100_000));
      if (left.length % CONCURRENCY === 0) await Promise.all(left.slice(-CONCURRENCY));
    }
    const waiting = (await Promise.all(left)).length;
    await pause(5_000);
    const rssAfter = rss();

    const round = (n: number) => Math.round(n * 10) / 10;
    return {
      workers: workerCount,
      transactions: created.length,
      seconds: round(seconds),
      perSecond: round(created.length / seconds),
      notFinal,
      lost: verdict.lost,
      doubled: verdict.duplicatedEffects,
      webhooksMissing: verdict.webhooksMissing,
      cpuMsPerTransaction: Object.fromEntries(
        Object.entries({
          ...Object.fromEntries(
            Object.keys(cpuAfter.seconds).map((name) => [
              name,
              cpuAfter.seconds[name]! - cpuBefore.seconds[name]!,
            ]),
          ),
          ...postgresByOwner(
            postgresCpuBetween(cpuBefore.postgres, cpuAfter.postgres),
            new URL(stack.databaseUrl).pathname.slice(1),
          ),
        }).map(([name, seconds]) => [name, round((seconds * 1000) / created.length)]),
      ),
      waiting,
      kbPerWaiting: Object.fromEntries(
        Object.keys(rssAfter).map((name) => [
          name,
          round((rssAfter[name]! - rssBefore[name]!) / 1024 / waiting),
        ]),
      ),
    };
  } finally {
    process.stdout.write(`[capacity] ${tag} done\n`);
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

describe('capacity', () => {
  it('measures the cluster at each worker count', async () => {
    const stack = await startClusterStack((stop) => cleanups.push(stop), { pprof: PROFILE });
    const phases: Phase[] = [];
    for (const workers of WORKERS) {
      const measured = await phase(stack, workers, `${workers} worker(s)`);
      phases.push(measured);
      process.stdout.write(`[capacity] ${JSON.stringify(measured)}\n`);
    }
    const rows = phases.map(
      (p) =>
        `| 1 API + ${p.workers} worker${p.workers > 1 ? 's' : ''} | ${p.perSecond}/s (${p.transactions} in ${p.seconds} s, ${p.notFinal} not final, ${p.lost} lost, ${p.doubled} doubled) | ${Object.entries(
          p.cpuMsPerTransaction,
        )
          .map(([name, ms]) => `${name} ${ms}`)
          .join(', ')} | ${Object.entries(p.kbPerWaiting)
          .map(([name, kb]) => `${name} ${kb}`)
          .join(', ')} |`,
    );
    process.stdout.write(
      [
        '',
        '| Topology | Mixed transactions until final | CPU ms per transaction | KB per waiting transaction |',
        '|---|---|---|---|',
        ...rows,
        '',
      ].join('\n'),
    );
    mkdirSync('bench/results', { recursive: true });
    const file = `bench/results/capacity-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
    writeFileSync(
      file,
      // With a final newline, as Prettier keeps JSON (the format check reads bench/results too).
      `${JSON.stringify(
        { warmUp: WARM_UP, transactions: TRANSACTIONS, concurrency: CONCURRENCY, waiting: WAITING, phases },
        null,
        2,
      )}\n`,
    );
    process.stdout.write(`results: ${file}\n`);
    for (const p of phases) {
      expect(p.notFinal).toBe(0);
      expect(p.lost + p.doubled).toBe(0);
    }
  }, 3_600_000);
});
