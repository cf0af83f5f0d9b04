import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

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
