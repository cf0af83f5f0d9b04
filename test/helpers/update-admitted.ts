import type { Client, WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import {
  forceFailUpdate,
  workflowIds,
  type FirstAnswer,
  type TransactionWorkflow,
} from '../../src/contracts';
import type { TestEnv } from './env';

const { UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED } =
  proto.temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage;

/**
 * Waits until the server holds the update, so the workflow's next task is sure to carry it (with no worker
 * polling, the first task of a workflow just started).
 */
export async function updateAdmitted(client: Client, workflowId: string, updateId: string): Promise<void> {
  for (;;) {
    try {
      await client.workflowService.pollWorkflowExecutionUpdate({
        namespace: client.options.namespace,
        updateRef: { workflowExecution: { workflowId }, updateId },
        waitPolicy: { lifecycleStage: UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED },
      });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/**
 * Starts a transaction's workflow with an ops stop already waiting for its first workflow task: the worker
 * is stopped until the server holds the stop, so that task carries it. Answers the workflow's handle and
 * the stop's answer (the transaction's final state), the worker running again.
 */
export async function startWithStopWaiting(
  env: Pick<TestEnv, 'client' | 'config' | 'stopWorker' | 'startWorker'>,
  workflow: TransactionWorkflow,
  input: { transactionId: string },
): Promise<{ handle: WorkflowHandle; stop: Promise<FirstAnswer> }> {
  await env.stopWorker();
  try {
    const handle = await env.client.workflow.start(workflow, {
      workflowId: workflowIds.transaction(input.transactionId),
      taskQueue: env.config.TEMPORAL_TASK_QUEUE,
      args: [input],
    });
    const stop = handle.executeUpdate(forceFailUpdate, {
      args: [{ reason: 'Stopped by ops.', actor: 'ops' }],
      updateId: 'stop',
    });
    // Not left unhandled while the worker starts again.
    stop.catch(() => undefined);
    await updateAdmitted(env.client, handle.workflowId, 'stop');
    return { handle, stop };
  } finally {
    await env.startWorker();
  }
}
