import { Gauge, type Registry } from 'prom-client';
import type { Db } from '../db/client';
import { openBreakCounts } from './breaks';

/**
 * `payments_reconciliation_open_breaks{kind, age}`: the breaks open or acknowledged now
 * (docs/reconciliation.md), read from the database at each scrape, so every process reports the same.
 */
export function registerOpenBreaks(registry: Registry, db: Db): void {
  new Gauge({
    name: 'payments_reconciliation_open_breaks',
    help: 'Reconciliation breaks open or acknowledged, by kind and age (under_1h, under_1d, over_1d).',
    labelNames: ['kind', 'age'] as const,
    registers: [registry],
    async collect() {
      // A scrape while Postgres is away shows nothing rather than failing the whole scrape.
      const counts = await openBreakCounts(db).catch(() => undefined);
      this.reset();
      for (const c of counts ?? []) this.set({ kind: c.kind, age: c.age }, c.count);
    },
  });
}
