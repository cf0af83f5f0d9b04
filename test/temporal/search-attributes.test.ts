/**
 * `ensureSearchAttributes` (src/temporal/search-attributes.ts) on a namespace that has none of our search
 * attributes yet, on the test run's Temporal dev server: it returns only once a start carrying all of them
 * is accepted, as an operator's set-up or `npm run dev` after an upgrade relies on.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { allSearchAttributes } from '../../src/contracts';
import { ensureSearchAttributes } from '../../src/temporal/search-attributes';
import { eventually } from '../helpers/eventually';
import { startCarryingEverySearchAttribute } from '../helpers/search-attribute-probe';

describe('ensureSearchAttributes', () => {
  it('registers them on a new namespace and returns once a start carrying them is accepted', async () => {
    const address = inject('temporalAddress');
    const namespace = `search-attributes-${randomUUID()}`;
    const connection = await Connection.connect({ address });
    try {
      await connection.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs('1 day'),
      });
      // A new namespace reaches the operator service at its next reload too.
      await eventually('the new namespace', async () =>
        connection.operatorService.listSearchAttributes({ namespace }).then(
          () => true,
          () => undefined,
        ),
      );

      const names = allSearchAttributes.map((key) => key.name);
      expect((await ensureSearchAttributes(address, namespace)).sort()).toEqual([...names].sort());

      // At once: without the wait the frontend refuses this for up to one namespace reload.
      await startCarryingEverySearchAttribute(new Client({ connection, namespace }));

      // Registered once: a second call adds nothing.
      expect(await ensureSearchAttributes(address, namespace)).toEqual([]);
    } finally {
      await connection.close();
    }
  }, 60_000);
});
