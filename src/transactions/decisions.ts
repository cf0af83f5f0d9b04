import type { Client } from '@temporalio/client';
import { hostedDecisionUpdate, type HostedDecision } from '../contracts';
import { sendUpdate } from '../temporal/client';

/**
 * Hands the customer's answer on a hosted page to the transaction's workflow. False when the workflow
 * takes no answer any more (already answered, ended, or never waiting): the page then shows the state.
 */
export async function submitDecision(
  temporal: Client,
  row: { id: string; runId: string | null },
  decision: HostedDecision,
): Promise<boolean> {
  const outcome = await sendUpdate(temporal, row.id, hostedDecisionUpdate, decision, row.runId);
  return outcome.kind === 'done';
}
