// The counted cost of each kind of transaction, for `npm run bench`: what the Temporal server and Postgres
// did for it, read from the workflows' histories, the dev server's persistence metrics and
// pg_stat_statements. Unlike timings, these counts come out the same run after run on any machine.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { sql } from 'drizzle-orm';
import type { createDatabase } from '../src/db/client';

type BenchDb = ReturnType<typeof createDatabase>['db'];
const EventType = proto.temporal.api.enums.v1.EventType;

/** What one transaction of a kind cost, averaged over the runs (counts of whole runs divided by runs). */
export interface Cost {
  kind: string;
  runs: number;
  /** Workflow executions started (the transaction's and its webhook deliveries'). */
  workflows: number;
  /** Workflow tasks completed: each is a round trip between the worker and the server. */
  workflowTasks: number;
  /** Activities the server schedules (each a task of its own) and local ones (a marker in history). */
  remoteActivities: number;
  localActivities: number;
  /** History events, over every workflow of the transaction. */
  events: number;
  /** Writes of workflow state by the Temporal server: execution created, updated, conflict-resolved. */
  stateWrites: number;
  /** Every persistence request the Temporal server made, reads and task bookkeeping included. */
  persistenceRequests: number;
  /** SQL statements the service ran against Postgres (BEGIN and COMMIT included), from pg_stat_statements. */
  statements: number;
  /** Persistence requests by operation, for a closer look. */
  byOperation: Record<string, number>;
}

const STATE_WRITES = new Set([
  'CreateWorkflowExecution',
  'UpdateWorkflowExecution',
  'ConflictResolveWorkflowExecution',
  'SetWorkflowExecution',
]);

/** The Temporal server's persistence requests so far, by operation (summed over services and namespaces). */
async function persistenceRequests(metricsUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^persistence_requests\{[^}]*operation="([^"]+)"[^}]*\} (\S+)$/.exec(line);
    if (match) counts.set(match[1]!, (counts.get(match[1]!) ?? 0) + Number(match[2]));
  }
  return counts;
}

/** Statements run in the bench's database so far, these readings excepted. */
async function statementsSoFar(db: BenchDb): Promise<number> {
  const result = await db.execute<{ calls: string }>(sql`
    select coalesce(sum(calls), 0)::text as calls from pg_stat_statements
    where dbid = (select oid from pg_database where datname = current_database())
      and query not ilike '%pg_stat_statements%'`);
  return Number(result.rows[0]!.calls);
}

/** The statements of one kind's runs, by calls per transaction (`BENCH_STATEMENTS=1`), to see what to cut. */
async function statementList(db: BenchDb, kind: string, runs: number): Promise<string> {
  const result = await db.execute<{ calls: string; query: string }>(sql`
    select calls::text, left(regexp_replace(query, '\\s+', ' ', 'g'), 150) as query from pg_stat_statements
    where dbid = (select oid from pg_database where datname = current_database())
      and query not ilike '%pg_stat_statements%'
    order by calls desc, query`);
  const lines = result.rows.map(
    (row) => `  ${(Number(row.calls) / runs).toFixed(1).padStart(5)}  ${row.query}`,
  );
  return `[statements] ${kind}, per transaction:\n${lines.join('\n')}\n`;
}

/** Makes pg_stat_statements readable in the bench's database (Postgres must preload it). */
export async function enableStatementCounts(db: BenchDb): Promise<void> {
  await db.execute(sql`create extension if not exists pg_stat_statements`);
}

/** Waits until the Temporal server has made no persistence request for `quietMs` (timers aside). */
async function settled(metricsUrl: string, quietMs: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let stableSince = Date.now();
  while (Date.now() < deadline) {
    const counts = await persistenceRequests(metricsUrl);
    // Reads of task queues and timers go on while idle: only writes of workflow state tell of work.
    const writes = [...counts].filter(([op]) => STATE_WRITES.has(op)).reduce((s, [, n]) => s + n, 0);
    if (writes !== last) {
      last = writes;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= quietMs) return;
    await sleep(100);
  }
}

/**
 * Runs `drive` for runs 0..runs-1, one after another (each waits for its transaction to be final and its
 * webhooks delivered), then counts what the server and Postgres did meanwhile, and what the workflows
 * started meanwhile hold in their histories.
 */
export async function countCost(
  options: { client: Client; db: BenchDb; metricsUrl: string; kind: string; runs: number },
  drive: (run: number) => Promise<void>,
): Promise<Cost> {
  const { client, db, metricsUrl, kind, runs } = options;
  await settled(metricsUrl, 1000, 30_000);
  const since = new Date(Date.now() - 1);
  const opsBefore = await persistenceRequests(metricsUrl);
  const listing = process.env.BENCH_STATEMENTS === '1';
  // Listing them needs the kind's statements alone: pg_stat_statements starts again from none.
  if (listing) await db.execute(sql`select pg_stat_statements_reset()`);
  const statementsBefore = await statementsSoFar(db);
  for (let run = 0; run < runs; run += 1) await drive(run);
  await settled(metricsUrl, 1000, 30_000);
  const opsAfter = await persistenceRequests(metricsUrl);
  const statements = (await statementsSoFar(db)) - statementsBefore;
  if (listing) process.stdout.write(await statementList(db, kind, runs));

  const byOperation: Record<string, number> = {};
  for (const [op, n] of opsAfter) {
    const delta = n - (opsBefore.get(op) ?? 0);
    if (delta > 0) byOperation[op] = delta;
  }
  let workflows = 0;
  let workflowTasks = 0;
  let remoteActivities = 0;
  let localActivities = 0;
  let events = 0;
  for await (const execution of client.workflow.list({ query: `StartTime >= "${since.toISOString()}"` })) {
    workflows += 1;
    const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    for (const event of history.events ?? []) {
      events += 1;
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) workflowTasks += 1;
      if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) remoteActivities += 1;
      if (
        event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED &&
        event.markerRecordedEventAttributes?.markerName === 'core_local_activity'
      )
        localActivities += 1;
    }
  }
  const total = (ops: Record<string, number>, keep: (op: string) => boolean) =>
    Object.entries(ops)
      .filter(([op]) => keep(op))
      .reduce((sum, [, n]) => sum + n, 0);
  const per = (n: number) => Math.round((n / runs) * 10) / 10;
  return {
    kind,
    runs,
    workflows: per(workflows),
    workflowTasks: per(workflowTasks),
    remoteActivities: per(remoteActivities),
    localActivities: per(localActivities),
    events: per(events),
    stateWrites: per(total(byOperation, (op) => STATE_WRITES.has(op))),
    persistenceRequests: per(total(byOperation, () => true)),
    statements: per(statements),
    byOperation: Object.fromEntries(Object.entries(byOperation).map(([op, n]) => [op, per(n)])),
  };
}

/** The counted costs as a Markdown table, each beside the no-op's (the first row). */
export function costTable(costs: Cost[]): string {
  const header =
    '| Kind | Workflows | Workflow tasks | Remote activities | Local activities | Events | State writes | Persistence requests | SQL statements |';
  const lines = [header, '|---|---|---|---|---|---|---|---|---|'];
  for (const c of costs) {
    lines.push(
      `| ${c.kind} | ${c.workflows} | ${c.workflowTasks} | ${c.remoteActivities} | ${c.localActivities} | ${c.events} | ${c.stateWrites} | ${c.persistenceRequests} | ${c.statements} |`,
    );
  }
  return lines.join('\n');
}
