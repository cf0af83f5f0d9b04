import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
} from '@temporalio/client';
import { workflowIds, type ReconciliationSummary, type WorkflowName } from '../contracts';

const RECONCILIATION: WorkflowName = 'reconciliation';

/**
 * The reconciliation schedule of a task queue (docs/reconciliation.md): a run every `everySeconds`, never two
 * at once (one still running skips the next), visible and pausable in the Temporal UI under Schedules. Every
 * worker process makes sure it exists as it starts; one schedule serves them all, however many there are.
 * `everySeconds` 0 removes it.
 */
export async function ensureReconciliationSchedule(
  client: Client,
  options: { taskQueue: string; everySeconds: number },
): Promise<'created' | 'kept' | 'updated' | 'removed' | 'none'> {
  const scheduleId = workflowIds.reconciliationSchedule(options.taskQueue);
  const handle = client.schedule.getHandle(scheduleId);
  if (options.everySeconds === 0) {
    return handle.delete().then(
      () => 'removed' as const,
      (error: unknown) => {
        if (error instanceof ScheduleNotFoundError) return 'none' as const;
        throw error;
      },
    );
  }
  const every = `${options.everySeconds} seconds`;
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every }] },
      action: {
        type: 'startWorkflow',
        workflowType: RECONCILIATION,
        workflowId: scheduleId,
        taskQueue: options.taskQueue,
        args: [{ trigger: 'schedule' }],
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      memo: { about: 'Reconciliation of the ledger (docs/reconciliation.md). Pause it here to stop runs.' },
    });
    return 'created';
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
  const described = await handle.describe();
  const interval = described.spec.intervals?.[0]?.every;
  if (interval === options.everySeconds * 1000 && described.spec.intervals?.length === 1) return 'kept';
  await handle.update((previous) => ({ ...previous, spec: { intervals: [{ every }] } }));
  return 'updated';
}

/** Runs reconciliation now, as `actor` asked, and waits for its summary. */
export async function runReconciliation(
  client: Client,
  options: { taskQueue: string; actor: string; sources?: string[]; since?: string; until?: string },
): Promise<{ runId: string; summary: ReconciliationSummary }> {
  const runId = workflowIds.reconciliationRun(
    `${new Date().toISOString().replace(/[:.]/g, '-')}-${Math.random().toString(36).slice(2, 8)}`,
  );
  const run = client.workflow.execute(RECONCILIATION, {
    workflowId: runId,
    taskQueue: options.taskQueue,
    args: [
      {
        trigger: options.actor,
        ...(options.sources?.length ? { sources: options.sources } : {}),
        ...(options.since ? { since: options.since } : {}),
        ...(options.until ? { until: options.until } : {}),
      },
    ],
  });
  const summary = (await run.catch((error: unknown) => {
    // The reason the run failed, not Temporal's wrapping of it ("Workflow execution failed").
    let cause = error;
    while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
    throw new Error(
      `The reconciliation run ${runId} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
  })) as ReconciliationSummary;
  return { runId, summary };
}
