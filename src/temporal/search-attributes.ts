import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { allSearchAttributes } from '../contracts';

const { temporal } = proto;

/**
 * How often every Temporal service reloads its namespaces, which hold our search attributes' names
 * (`system.namespaceCacheRefreshInterval`, set to this in deploy/temporal/dynamicconfig.yaml).
 */
export const NAMESPACE_REFRESH_MS = 2_000;

/** How long a fresh registration may take to become usable before we give up. */
const USABLE_WITHIN_MS = 30_000;

/**
 * Registers our search attributes on the namespace where they are missing, and returns once every Temporal
 * service can use them. The dev server registers them only when it creates its database, so an existing
 * `.data/temporal.db` needs this after an upgrade; a real cluster needs it once, as docs/operations.md says.
 *
 * A name registered now reaches each service at its next namespace reload: until then the frontend refuses
 * to start a workflow that carries it, and the history service fails the workflow task that sets it. So
 * this waits until the frontend accepts a query over every name, then one reload more, which every other
 * service has had by then (they all reload on the same interval). It waits so even when it found every
 * name registered: the call that registered them may have failed before its wait (and be retried), or
 * another process may have registered them a moment ago.
 */
export async function ensureSearchAttributes(address: string, namespace: string): Promise<string[]> {
  const connection = await Connection.connect({ address });
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    const known = new Set(Object.keys(existing.customAttributes ?? {}));
    const missing = allSearchAttributes.map((key) => key.name).filter((name) => !known.has(name));
    if (missing.length > 0) {
      const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
      await connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map((name) => [name, keyword])),
      });
    }
    const deadline = Date.now() + USABLE_WITHIN_MS;
    while (!(await frontendAccepts(connection, namespace))) {
      if (Date.now() > deadline)
        throw new Error(
          `Temporal does not accept the search attributes ${allSearchAttributes.map((key) => key.name).join(', ')} on namespace ${namespace} ${USABLE_WITHIN_MS / 1000} s after they were registered`,
        );
      await sleep(250);
    }
    await sleep(NAMESPACE_REFRESH_MS + 500);
    return missing;
  } finally {
    await connection.close();
  }
}

/**
 * How the frontend refuses a name it has not loaded yet: as having no mapping (a start), or in a query as
 * not a valid search attribute (SQL visibility, server 1.29) or as an invalid search attribute: NAME (the
 * dev server's, 1.32).
 */
const NOT_LOADED_YET =
  /no mapping defined for search attribute|is not a valid search attribute|invalid search attribute: /i;

/** Whether the frontend knows every one of our names; any error but `NOT_LOADED_YET` is thrown. */
async function frontendAccepts(connection: Connection, namespace: string): Promise<boolean> {
  const query = allSearchAttributes.map((key) => `${key.name} = 'usable'`).join(' AND ');
  try {
    await connection.workflowService.countWorkflowExecutions({ namespace, query });
    return true;
  } catch (error) {
    if (NOT_LOADED_YET.test(String(error))) return false;
    throw error;
  }
}
