/** Links into the Temporal UI that open what ops look for: a filtered list of transactions, or one. */
import { searchAttributes } from '../contracts';

/** Transactions still waiting (not final), as the UI's list query has it. */
export const WAITING = `${searchAttributes.status.name} IN ('PENDING', 'REDIRECT') AND ExecutionStatus = 'Running'`;
/** Transactions that ended FAILED: declined, expired or failed by ops. */
export const DECLINED = `${searchAttributes.status.name} = 'FAILED'`;

const base = (ui: string, namespace: string) =>
  `${ui.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows`;

/** The UI's workflow list filtered by a visibility query. */
export function transactionListUrl(ui: string, namespace: string, query: string): string {
  return `${base(ui, namespace)}?query=${encodeURIComponent(query)}`;
}

/** The UI's list of exactly these workflows. */
export function workflowsUrl(ui: string, namespace: string, workflowIds: string[]): string {
  const ids = workflowIds.map((id) => `'${id.replaceAll("'", "''")}'`).join(', ');
  return transactionListUrl(ui, namespace, `WorkflowId IN (${ids})`);
}
