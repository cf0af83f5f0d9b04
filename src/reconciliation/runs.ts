import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { reconciliationBreaks, reconciliationRuns } from '../db/schema/index';
import { recordFindings, UNSETTLED, type Recorded } from './breaks';
import type { ReconciliationLeg } from './leg';

export interface Window {
  from: string;
  to: string;
}

/**
 * The window of a run, recorded under its id before anything is read (a retried step gets the same one).
 * A scheduled run reads from where the latest finished scheduled run stopped (from the beginning the
 * first time) to `lagMs` before now, so what is still settling waits for the next run; a run asked for by
 * hand reads what it is given. Reading a window again opens no second break: a break is one row.
 */
export async function planRun(
  db: Db,
  run: { id: string; trigger: string; sources: string[]; since?: string; until?: string; lagMs: number },
): Promise<Window> {
  const [existing] = await db.select().from(reconciliationRuns).where(eq(reconciliationRuns.id, run.id));
  if (existing) return { from: existing.windowStart.toISOString(), to: existing.windowEnd.toISOString() };
  const to = run.until ? new Date(run.until) : new Date(Date.now() - run.lagMs);
  let from = run.since ? new Date(run.since) : undefined;
  if (!from) {
    const [latest] = await db
      .select({ windowEnd: reconciliationRuns.windowEnd })
      .from(reconciliationRuns)
      .where(and(eq(reconciliationRuns.trigger, 'schedule'), eq(reconciliationRuns.state, 'finished')))
      .orderBy(desc(reconciliationRuns.windowEnd))
      .limit(1);
    from = latest?.windowEnd ?? new Date(0);
  }
  if (from > to) from = to;
  await db
    .insert(reconciliationRuns)
    .values({
      id: run.id,
      trigger: run.trigger,
      sources: run.sources.join(','),
      windowStart: from,
      windowEnd: to,
    })
    .onConflictDoNothing();
  const [row] = await db.select().from(reconciliationRuns).where(eq(reconciliationRuns.id, run.id));
  return { from: row!.windowStart.toISOString(), to: row!.windowEnd.toISOString() };
}

/** Reads one source over the run's window and records what it found (breaks opened, seen, resolved). */
export async function reconcileSource(
  db: Db,
  leg: ReconciliationLeg,
  run: { id: string; window: Window },
): Promise<Recorded> {
  const unsettled = await db
    .select({ reference: reconciliationBreaks.reference, transactionId: reconciliationBreaks.transactionId })
    .from(reconciliationBreaks)
    .where(
      and(eq(reconciliationBreaks.source, leg.source), sql`${reconciliationBreaks.state} in ${UNSETTLED}`),
    );
  const findings = await leg.check({
    from: new Date(run.window.from),
    to: new Date(run.window.to),
    transactionIds: [...new Set(unsettled.flatMap((b) => (b.transactionId ? [b.transactionId] : [])))],
    references: unsettled.map((b) => b.reference),
  });
  return recordFindings(db, run.id, leg.source, findings);
}

/** Marks the run finished with its summary: the next scheduled run starts where this one stopped. */
export async function finishRun(db: Db, id: string, summary: Record<string, unknown>): Promise<void> {
  await db
    .update(reconciliationRuns)
    .set({ state: 'finished', summary, finishedAt: sql`now()` })
    .where(and(eq(reconciliationRuns.id, id), eq(reconciliationRuns.state, 'running')));
}

/** The latest runs, newest first. */
export async function listRuns(db: Db, limit = 20) {
  return db.select().from(reconciliationRuns).orderBy(desc(reconciliationRuns.startedAt)).limit(limit);
}
