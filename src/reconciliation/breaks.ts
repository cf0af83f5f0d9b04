import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { reconciliationBreakEvents, reconciliationBreaks, type BreakState } from '../db/schema/index';

/**
 * What a break is (docs/reconciliation.md): the ledger lacks what the source recorded (`missing_in_ledger`),
 * the source lacks what the ledger recorded (`missing_at_source`), the two disagree on the `amount`, the
 * `currency` or the `status`, something happened twice (`duplicate`), a transaction waits past its kind's
 * deadline (`stale_pending`), or a final transaction's webhook event was never made (`missing_event`).
 */
export const BREAK_KINDS = [
  'missing_in_ledger',
  'missing_at_source',
  'amount',
  'currency',
  'status',
  'duplicate',
  'stale_pending',
  'missing_event',
] as const;
export type BreakKind = (typeof BREAK_KINDS)[number];

/** A difference one run found: (source, reference, kind) names it across runs. */
export interface Finding {
  reference: string;
  kind: BreakKind;
  transactionId?: string;
  merchantId?: string;
  mode?: string;
  expected?: string;
  observed?: string;
  message: string;
}

/** Breaks a run re-examines whatever its window: every one of its source still open or acknowledged. */
export const UNSETTLED: BreakState[] = ['open', 'acknowledged'];

export interface Recorded {
  found: number;
  /** Found for the first time, or found again after it was resolved. */
  opened: number;
  resolved: number;
}

/**
 * Records what one run found for one source, in one database transaction: a new difference opens a break,
 * one already known is seen again (a resolved one opens again), an accepted one stays accepted; every
 * unsettled break of the source the run did not find is resolved by the run. Each change of state is an
 * event with the run as its actor. Running it twice with the same findings changes nothing more.
 */
export async function recordFindings(
  db: Db,
  runId: string,
  source: string,
  findings: Finding[],
): Promise<Recorded> {
  const actor = `recon:${runId}`;
  // One finding per break: a leg may meet the same difference from both of its sides.
  const unique = [...new Map(findings.map((f) => [`${f.reference}\u0000${f.kind}`, f])).values()];
  return db.transaction(async (tx) => {
    let opened = 0;
    const seen = new Set<number>();
    for (const finding of unique) {
      const values = {
        source,
        reference: finding.reference,
        kind: finding.kind,
        transactionId: finding.transactionId ?? null,
        merchantId: finding.merchantId ?? null,
        mode: finding.mode ?? null,
        expected: finding.expected ?? null,
        observed: finding.observed ?? null,
        message: finding.message,
        lastRunId: runId,
      };
      const [before] = await tx
        .select({
          id: reconciliationBreaks.id,
          state: reconciliationBreaks.state,
          lastRunId: reconciliationBreaks.lastRunId,
        })
        .from(reconciliationBreaks)
        .where(
          and(
            eq(reconciliationBreaks.source, source),
            eq(reconciliationBreaks.reference, finding.reference),
            eq(reconciliationBreaks.kind, finding.kind),
          ),
        )
        .for('update');
      if (!before) {
        const [row] = await tx
          .insert(reconciliationBreaks)
          .values(values)
          .returning({ id: reconciliationBreaks.id });
        await tx
          .insert(reconciliationBreakEvents)
          .values({ breakId: row!.id, actor, action: 'found', stateAfter: 'open' });
        seen.add(row!.id);
        opened += 1;
        continue;
      }
      seen.add(before.id);
      // The same run recording again (a retried activity) changes nothing.
      if (before.lastRunId === runId) continue;
      const reopen = before.state === 'resolved';
      await tx
        .update(reconciliationBreaks)
        .set({
          ...values,
          state: reopen ? 'open' : before.state,
          ...(reopen ? { reason: null } : {}),
          lastSeenAt: sql`now()`,
          seen: sql`${reconciliationBreaks.seen} + 1`,
          updatedAt: sql`now()`,
        })
        .where(eq(reconciliationBreaks.id, before.id));
      if (reopen) {
        opened += 1;
        await tx.insert(reconciliationBreakEvents).values({
          breakId: before.id,
          actor,
          action: 'found again',
          stateBefore: 'resolved',
          stateAfter: 'open',
        });
      }
    }
    const unsettled = await tx
      .select({ id: reconciliationBreaks.id, state: reconciliationBreaks.state })
      .from(reconciliationBreaks)
      .where(and(eq(reconciliationBreaks.source, source), inArray(reconciliationBreaks.state, UNSETTLED)))
      .for('update');
    const gone = unsettled.filter((b) => !seen.has(b.id));
    if (gone.length > 0) {
      await tx
        .update(reconciliationBreaks)
        .set({ state: 'resolved', updatedAt: sql`now()` })
        .where(
          inArray(
            reconciliationBreaks.id,
            gone.map((b) => b.id),
          ),
        );
      await tx.insert(reconciliationBreakEvents).values(
        gone.map((b) => ({
          breakId: b.id,
          actor,
          action: 'resolved',
          stateBefore: b.state,
          stateAfter: 'resolved',
          reason: 'A later run found it matching.',
        })),
      );
    }
    return { found: unique.length, opened, resolved: gone.length };
  });
}

/** What ops may do to a break, and from which states. */
const OPS_ACTIONS = {
  acknowledge: { from: ['open'], to: 'acknowledged', action: 'acknowledged' },
  accept: { from: ['open', 'acknowledged'], to: 'accepted', action: 'accepted' },
} as const;

export class BreakActionError extends Error {}

/**
 * Acknowledges a break (ops are on it: later runs keep checking it) or accepts it (ops decided it stands,
 * with a reason: later runs leave it accepted). Audited with the actor; never moves money.
 */
export async function actOnBreak(
  db: Db,
  id: number,
  what: keyof typeof OPS_ACTIONS,
  actor: string,
  reason?: string,
): Promise<BreakRow> {
  const rule = OPS_ACTIONS[what];
  if (what === 'accept' && !reason?.trim()) throw new BreakActionError('Accepting a break needs a --reason.');
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(reconciliationBreaks)
      .where(eq(reconciliationBreaks.id, id))
      .for('update');
    if (!row) throw new BreakActionError(`No break ${id}.`);
    if (!(rule.from as readonly string[]).includes(row.state))
      throw new BreakActionError(
        `Break ${id} is ${row.state}: only a break that is ${rule.from.join(' or ')} can be ${rule.action}.`,
      );
    const [updated] = await tx
      .update(reconciliationBreaks)
      .set({ state: rule.to, ...(reason ? { reason } : {}), updatedAt: sql`now()` })
      .where(eq(reconciliationBreaks.id, id))
      .returning();
    await tx.insert(reconciliationBreakEvents).values({
      breakId: id,
      actor,
      action: rule.action,
      stateBefore: row.state,
      stateAfter: rule.to,
      reason: reason ?? null,
    });
    return updated!;
  });
}

export type BreakRow = typeof reconciliationBreaks.$inferSelect;

/** Breaks, newest first: by state (unsettled by default), kind and source. */
export async function listBreaks(
  db: Db,
  filter: { states?: BreakState[]; kind?: string; source?: string; limit?: number } = {},
): Promise<BreakRow[]> {
  return db
    .select()
    .from(reconciliationBreaks)
    .where(
      and(
        inArray(reconciliationBreaks.state, filter.states ?? UNSETTLED),
        filter.kind ? eq(reconciliationBreaks.kind, filter.kind) : undefined,
        filter.source ? eq(reconciliationBreaks.source, filter.source) : undefined,
      ),
    )
    .orderBy(desc(reconciliationBreaks.lastSeenAt), desc(reconciliationBreaks.id))
    .limit(filter.limit ?? 100);
}

/** One break with its history of states. */
export async function showBreak(db: Db, id: number) {
  const [row] = await db.select().from(reconciliationBreaks).where(eq(reconciliationBreaks.id, id));
  if (!row) return undefined;
  const events = await db
    .select()
    .from(reconciliationBreakEvents)
    .where(eq(reconciliationBreakEvents.breakId, id))
    .orderBy(reconciliationBreakEvents.createdAt, reconciliationBreakEvents.id);
  return { ...row, events };
}

/** Unsettled breaks by kind and age, for the metric. */
export async function openBreakCounts(db: Db): Promise<{ kind: string; age: string; count: number }[]> {
  const result = await db.execute<{ kind: string; age: string; count: number }>(sql`
    select kind,
      case when first_seen_at > now() - interval '1 hour' then 'under_1h'
           when first_seen_at > now() - interval '1 day' then 'under_1d'
           else 'over_1d' end as age,
      count(*)::int as count
    from reconciliation_breaks where state in ('open', 'acknowledged')
    group by 1, 2`);
  return result.rows;
}
