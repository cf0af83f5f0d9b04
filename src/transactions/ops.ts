import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import {
  alreadyFinal,
  forceFailUpdate,
  retryNowUpdate,
  searchAttributes,
  stateQuery,
  webhookRetryNowUpdate,
  workflowIds,
  type OpsAction,
  type TransactionState,
} from '../contracts';
import { isFinal, type TransactionKind } from '../lib/vocabulary';
import type { Db } from '../db/client';
import { sendUpdate, type UpdateOutcome } from '../temporal/client';
import { findWebhookEvents, webhookAttemptsOf } from './webhook-events';
import { findTransaction } from './lookup';
import { opsTrail } from './ops-audit';
import { transactionBody } from './view';

export interface StuckTransaction {
  transactionId: string;
  kind: string;
  status: string;
  /** Minutes since the workflow started. */
  ageMinutes: number;
  /** Where it waits, in one line. */
  waiting: string;
}

/** How long ops commands wait for one workflow's answer before saying no worker answered. */
const ANSWER_WAIT_MS = 5_000;

/** A retrying activity of a workflow, from the server's description. */
async function retryingActivity(client: Client, workflowId: string): Promise<string | undefined> {
  const { raw } = await client.workflow.getHandle(workflowId).describe();
  const retrying = (raw.pendingActivities ?? []).find((a) => (a.attempt ?? 0) > 1);
  if (!retrying) return undefined;
  const error = retrying.lastFailure?.message ?? 'no answer';
  return `${retrying.activityType?.name ?? 'activity'} retrying, attempt ${retrying.attempt}: ${error}`;
}

/** The workflow's own account, or undefined when no worker answers the query in time. */
async function askState(client: Client, workflowId: string): Promise<TransactionState | undefined> {
  return client
    .withDeadline(Date.now() + ANSWER_WAIT_MS, () => client.workflow.getHandle(workflowId).query(stateQuery))
    .catch(() => undefined);
}

/**
 * Transactions that are not final past their expected time, from Temporal's visibility (search
 * attributes) and each workflow's own state: running longer than `olderThanMs` and not simply waiting
 * on a customer or deposits within their deadline; webhook deliveries still retrying after that long; and
 * terminated workflows whose status never became final (ops should not terminate: the projection then
 * stays as it was), unless a later run (a reset) took over or the status was made final since.
 */
export async function findStuck(
  db: Db,
  client: Client,
  options: { taskQueue: string; olderThanMs: number; kind?: TransactionKind; now?: Date },
): Promise<StuckTransaction[]> {
  const now = options.now ?? new Date();
  const before = new Date(now.getTime() - options.olderThanMs).toISOString();
  const ours = `TaskQueue = '${options.taskQueue.replaceAll("'", "''")}'`;
  const kind = options.kind ? ` AND ${searchAttributes.kind.name} = '${options.kind}'` : '';
  const notFinal = `${searchAttributes.status.name} IN ('PENDING', 'REDIRECT')`;
  const stuck: StuckTransaction[] = [];
  const describe = (info: WorkflowExecutionInfo, waiting: string, status?: string): StuckTransaction => ({
    transactionId: info.workflowId,
    kind: String(info.typedSearchAttributes.get(searchAttributes.kind) ?? info.type),
    status: status ?? String(info.typedSearchAttributes.get(searchAttributes.status) ?? '?'),
    ageMinutes: Math.floor((now.getTime() - info.startTime.getTime()) / 60_000),
    waiting,
  });
  const running = `${ours} AND ExecutionStatus = 'Running' AND ${searchAttributes.kind.name} IS NOT NULL AND StartTime < '${before}'`;
  for await (const info of client.workflow.list({ query: `${running}${kind}` })) {
    const state = await askState(client, info.workflowId);
    if (!state) {
      stuck.push(describe(info, 'no worker answered the state query'));
      continue;
    }
    // Visibility lags a moment behind a workflow that just ended: its own state says it is final.
    if (isFinal(state.status) && state.waitingFor === 'nothing') continue;
    const onCustomer = state.waitingFor === 'customer' || state.waitingFor === 'deposits';
    const withinDeadline = state.until !== undefined && Date.parse(state.until) > now.getTime();
    const retrying = await retryingActivity(client, info.workflowId);
    if (onCustomer && withinDeadline && !retrying) continue;
    stuck.push(describe(info, retrying ? `${state.detail}; ${retrying}` : state.detail, state.status));
  }
  const terminated = `${ours} AND ExecutionStatus = 'Terminated' AND ${notFinal}${kind}`;
  for await (const info of client.workflow.list({ query: terminated })) {
    const latest = await client.workflow
      .getHandle(info.workflowId)
      .describe()
      .catch(() => undefined);
    if (latest && latest.runId !== info.runId) continue;
    const row = await findTransaction(db, info.workflowId);
    if (row && isFinal(row.status)) continue;
    stuck.push(describe(info, 'terminated: the projection was never made final'));
  }
  const webhooks = await stuckWebhooks(db, client, `${ours} AND StartTime < '${before}'`, now);
  stuck.push(...webhooks.filter((w) => !options.kind || w.kind === options.kind));
  return stuck.sort((a, b) => b.ageMinutes - a.ageMinutes);
}

/**
 * Webhook deliveries still retrying (a failing merchant endpoint), each under its transaction and that
 * transaction's kind; what waits says it is the delivery.
 */
async function stuckWebhooks(db: Db, client: Client, scope: string, now: Date): Promise<StuckTransaction[]> {
  const found: StuckTransaction[] = [];
  const running = `${scope} AND WorkflowType = 'webhookDelivery' AND ExecutionStatus = 'Running'`;
  for await (const info of client.workflow.list({ query: running })) {
    const eventId = /^webhook-(.+)-\d+$/.exec(info.workflowId)?.[1];
    const [event] = eventId ? await findWebhookEvents(db, eventId) : [];
    if (!event) continue;
    const row = await findTransaction(db, event.transactionId);
    const metadata = (await client
      .withDeadline(Date.now() + ANSWER_WAIT_MS, () =>
        client.workflow.getHandle(info.workflowId).query('__temporal_workflow_metadata'),
      )
      .catch(() => undefined)) as { currentDetails?: string } | undefined;
    found.push({
      transactionId: event.transactionId,
      kind: row?.kind ?? '?',
      status: row?.status ?? '?',
      ageMinutes: Math.floor((now.getTime() - info.startTime.getTime()) / 60_000),
      waiting: `webhook ${event.id} (${info.workflowId}): ${metadata?.currentDetails || 'no worker answered'}`,
    });
  }
  return found;
}

/**
 * Everything ops look at for one transaction: projection, workflow, webhooks, audit trail. The workflow is
 * the run the service bound to the transaction (docs/operations.md, what binds a run), not whatever ran
 * last under its id. For an id the service recorded nothing under, only its audit trail: the runs started
 * there by hand and refused.
 */
export async function showTransaction(db: Db, client: Client, transactionId: string) {
  const row = await findTransaction(db, transactionId);
  if (!row) {
    const audit = await auditOf(db, transactionId);
    return audit.length > 0 ? { projection: null, workflow: null, webhooks: [], audit } : undefined;
  }
  const handle = client.workflow.getHandle(workflowIds.transaction(transactionId), row.runId ?? undefined);
  const description = await handle.describe().catch(() => undefined);
  const events = await findWebhookEvents(db, transactionId);
  const attempts = await webhookAttemptsOf(
    db,
    events.map((e) => e.id),
  );
  return {
    projection: { kind: row.kind, mode: row.mode, merchant_id: row.merchantId, ...transactionBody(row) },
    workflow: description && {
      run_id: description.runId,
      status: description.status.name,
      started: description.startTime.toISOString(),
      summary: await description.staticSummary(),
      state: description.status.name === 'RUNNING' ? await askState(client, transactionId) : undefined,
      pending_activities: (description.raw.pendingActivities ?? []).map((a) => ({
        activity: a.activityType?.name,
        attempt: a.attempt,
        last_error: a.lastFailure?.message ?? null,
      })),
    },
    webhooks: events.map((event) => ({
      event_id: event.id,
      event: event.eventKey,
      status: event.status,
      attempts: attempts
        .filter((a) => a.eventId === event.id)
        .map((a) => ({
          run: a.run,
          attempt: a.attempt,
          at: a.startedAt,
          http_status: a.httpStatus,
          error: a.error,
        })),
    })),
    audit: await auditOf(db, transactionId),
  };
}

async function auditOf(db: Db, transactionId: string) {
  return (await opsTrail(db, transactionId)).map((a) => ({
    at: a.createdAt,
    actor: a.actor,
    action: a.action,
    reason: a.reason,
    before: a.statusBefore,
    after: a.statusAfter,
  }));
}

/**
 * An update's outcome, with a closed workflow told as what it is to ops: a final transaction refuses
 * every action, saying its status.
 */
async function refusedWhenFinal<T>(db: Db, client: Client, transactionId: string, outcome: UpdateOutcome<T>) {
  if (outcome.kind !== 'closed') return outcome;
  const row = await findTransaction(db, transactionId);
  if (!row) return { kind: 'refused', message: `Transaction ${transactionId} not found.` } as const;
  if (isFinal(row.status)) return { kind: 'refused', message: alreadyFinal(row.status) } as const;
  const execution = await client.workflow
    .getHandle(transactionId)
    .describe()
    .then(
      (d) => d.status.name,
      () => 'NOT_FOUND',
    );
  return {
    kind: 'refused',
    message:
      `The workflow of ${transactionId} is ${execution.toLowerCase().replace(/_/g, ' ')} while the transaction ` +
      `is ${row.status}: reset it to its last workflow task (Temporal UI: Reset; or npx payments temporal workflow reset ` +
      `--workflow-id ${transactionId} --type LastWorkflowTask --reason "…"), then act on it again.`,
  } as const;
}

/** Cuts the transaction's current backoff short, and the wait of its webhook deliveries still running. */
export async function retryNow(db: Db, client: Client, transactionId: string, action: OpsAction) {
  const transaction = await refusedWhenFinal(
    db,
    client,
    transactionId,
    await sendUpdate(client, transactionId, retryNowUpdate, action),
  );
  const webhooks: { event_id: string; run: number }[] = [];
  for (const event of await findWebhookEvents(db, transactionId)) {
    if (event.status !== 'pending') continue;
    const runs = (await webhookAttemptsOf(db, [event.id])).map((a) => a.run);
    const run = Math.max(0, ...runs);
    const cut = await client.workflow
      .getHandle(workflowIds.webhook(event.id, run))
      .executeUpdate(webhookRetryNowUpdate, { args: [action] })
      .then(
        () => true,
        () => false,
      );
    if (cut) webhooks.push({ event_id: event.id, run });
  }
  return { transaction, webhooks };
}

/** Fails the transaction with its compensations; answers its final state. */
export async function forceFail(db: Db, client: Client, transactionId: string, action: OpsAction) {
  return refusedWhenFinal(
    db,
    client,
    transactionId,
    await sendUpdate(client, transactionId, forceFailUpdate, action),
  );
}
