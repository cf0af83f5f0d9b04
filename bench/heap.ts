// Heap per cached waiting workflow, for `npm run bench` (bench/README.md): a worker built as the service
// builds its own (the same workflow bundle, activities and codec), run in this process with its workflows on
// the main thread (`debugMode`), so the V8 heap after a forced garbage collection shows what each cached
// workflow keeps. 3-D Secure card payments are started and left waiting on their challenge; the heap is read
// before and after the last `BENCH_HEAP_WORKFLOWS` (default 400, at most the cache less 50). Unlike resident
// memory, this figure holds run to run. The worker's cache is the service's (`WORKER_MAX_CACHED_WORKFLOWS`,
// 500): once it is full, `BENCH_HEAP_BEYOND` more (default 1,000; 0 skips them) are left waiting, and the
// heap read again: what a waiting transaction beyond the cache keeps in the worker, the worker's part of the
// memory slope. Spawned with `--expose-gc` by bench/run.ts, with the service's environment and its own task
// queue; prints one JSON line. `BENCH_HEAP_SNAPSHOT_DIR`: also writes a V8 heap snapshot there before and
// after the last workflows, to compare in Chrome's DevTools (Memory, Comparison).
import { writeHeapSnapshot } from 'node:v8';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger, Worker } from '@temporalio/worker';
import { createActivities } from '../activities/index';
import { createDatabase } from '../src/db/client';
import { createMerchant } from '../src/merchants/accounts';
import { loadConfig } from '../src/platform/config';
import { workflowBundle } from '../src/process/worker';
import { SANDBOX_TERMINALS } from '../src/schemas/sandbox-cards';
import { dataConverter, serviceClientOptions } from '../src/temporal/client';
import { firstAnswerUpdate } from '../src/contracts';
import { insertCardTransaction } from '../test/helpers/fixtures';
import { testClientOptions } from '../test/helpers/update-key';

const WORKFLOWS = Number(process.env.BENCH_HEAP_WORKFLOWS ?? 400);
const BEYOND = Number(process.env.BENCH_HEAP_BEYOND ?? 1000);
const WARM = 50;

const collect = globalThis.gc;
if (!collect) throw new Error('run with --expose-gc');
const settledHeap = async () => {
  for (let i = 0; i < 3; i += 1) {
    collect();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return process.memoryUsage().heapUsed;
};

async function main() {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const config = loadConfig({ ...process.env, TEMPORAL_TASK_QUEUE: `bench-heap-${process.pid}` });
  const database = createDatabase(config.DATABASE_URL, 4);
  const merchant = await createMerchant(database.db, config.MASTER_KEY, {
    name: 'Bench heap',
    wallets: [{ currency: 'USD', amount: 1_000_000n }],
    terminals: SANDBOX_TERMINALS,
  });
  // Each of the measured workflows must stay in the cache: a smaller cache measures fewer.
  const measured = Math.max(0, Math.min(WORKFLOWS, config.WORKER_MAX_CACHED_WORKFLOWS - WARM));
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowBundle: await workflowBundle({ stackTraces: config.WORKFLOW_STACK_TRACES }),
    activities: createActivities({ db: database.db, config }),
    dataConverter: dataConverter(config),
    debugMode: true,
    maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS,
  });
  const running = worker.run();
  // Started as the service starts them (its update key in the input, its updates proven): a run started
  // any other way is refused at its first step.
  const client = new Client({
    connection: await Connection.connect({ address: config.TEMPORAL_ADDRESS }),
    ...testClientOptions(serviceClientOptions(config), config.MASTER_KEY),
  });
  const leaveWaiting = async () => {
    const input = await insertCardTransaction(database.db, config.MASTER_KEY, merchant, {
      pan: '4111111111111111',
    });
    const handle = await client.workflow.start('cardPayment', {
      workflowId: input.transactionId,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [input],
    });
    const answer = await handle.executeUpdate(firstAnswerUpdate);
    if (answer.status !== 'REDIRECT') throw new Error(`expected a challenge, got ${answer.status}`);
  };
  const leave = async (count: number) => {
    for (let i = 0; i < count; i += 8)
      await Promise.all(Array.from({ length: Math.min(8, count - i) }, leaveWaiting));
  };
  const snapshots = process.env.BENCH_HEAP_SNAPSHOT_DIR;
  const snapshot = (name: string) => {
    if (snapshots) writeHeapSnapshot(join(snapshots, `worker-${name}.heapsnapshot`));
  };
  await leave(WARM);
  const before = await settledHeap();
  snapshot('before');
  await leave(measured);
  const after = await settledHeap();
  snapshot('after');
  const cached = worker.getStatus().numCachedWorkflows;
  let beyond: { workflows: number; cached: number; bytesPerWorkflow: number } | undefined;
  if (BEYOND > 0) {
    // The cache full, and a hundred evicted past it, before the first read.
    await leave(Math.max(0, config.WORKER_MAX_CACHED_WORKFLOWS - WARM - measured) + 100);
    const full = await settledHeap();
    await leave(BEYOND);
    const later = await settledHeap();
    beyond = {
      workflows: BEYOND,
      cached: worker.getStatus().numCachedWorkflows,
      bytesPerWorkflow: (later - full) / BEYOND,
    };
  }
  worker.shutdown();
  await running;
  await database.close();
  process.stdout.write(
    `${JSON.stringify({ workflows: measured, cached, bytesPerWorkflow: (after - before) / Math.max(1, measured), beyond })}\n`,
  );
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
