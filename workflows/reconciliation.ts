import { setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type { ReconciliationInput, ReconciliationSummary } from '../src/contracts';
import { reconciliation as recon } from './activities';

/**
 * One reconciliation run (docs/reconciliation.md): plans its window, reads each source into breaks, then
 * marks the window done so the next scheduled run starts after it. It moves no money. What it is doing
 * and, at its end, what it found are its current details in the Temporal UI.
 */
export async function reconciliation(input: ReconciliationInput): Promise<ReconciliationSummary> {
  const runId = workflowInfo().workflowId;
  const { window, sources } = await recon.planReconciliation({ ...input, runId });
  const summary: ReconciliationSummary = { window, sources: {} };
  for (const source of sources) {
    setCurrentDetails(`Reading ${source}: ${window.from} to ${window.to}.`);
    summary.sources[source] = await recon.reconcileSource({ runId, source, window });
  }
  await recon.finishReconciliation({ runId, summary: summary.sources });
  setCurrentDetails(
    `Read ${window.from} to ${window.to}. ` +
      Object.entries(summary.sources)
        .map(([source, s]) => `${source}: ${s.found} breaks (${s.opened} new), ${s.resolved} resolved`)
        .join('; ') +
      '. Open breaks: npx payments recon list.',
  );
  return summary;
}
