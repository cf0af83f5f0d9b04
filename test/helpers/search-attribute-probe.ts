import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { allSearchAttributes } from '../../src/contracts';

/**
 * Starts a workflow carrying every search attribute of ours, then terminates it (no worker polls its task
 * queue): throws when the start is refused, as it is while the frontend does not know them yet.
 */
export async function startCarryingEverySearchAttribute(client: Client): Promise<void> {
  const handle = await client.workflow.start('searchAttributesProbe', {
    taskQueue: 'search-attributes-probe',
    workflowId: `search-attributes-probe-${randomUUID()}`,
    typedSearchAttributes: allSearchAttributes.map((key) => ({ key, value: 'probe' })),
  });
  await handle.terminate('the probe only checks that its start is accepted');
}
