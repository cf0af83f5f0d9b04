import { and, eq, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { aftercareRuns, paymentLinks, transactions } from '../db/schema/index';

/**
 * What a service workflow acts for: the record the service made before it started the workflow. Only the
 * run chain bound to that record may act for it (docs/operations.md, what binds a run).
 */
export type RunOwner =
  | { kind: 'transaction'; transactionId: string }
  | { kind: 'link'; linkId: string }
  | { kind: 'aftercare'; transactionId: string };

/** A run as Temporal names it: its own id and its chain's first run id (kept by Resets). */
export interface RunRef {
  runId: string;
  chain: string;
}

/** The run bound to a record: its chain and the run that acts now. */
export interface BoundRun {
  chain: string | null;
  runId: string | null;
  /** The transaction the record belongs to (the link's id for a link), for the audit trail. */
  auditId: string;
  /** The record's status, for the audit trail. */
  status: string;
}

/** The chain value of records closed before runs were bound: no run may act for them. */
export const LEGACY_CHAIN = 'legacy';

/**
 * Transactions and payment links: one row each, bound to one run chain, in columns of the same names. What
 * the run was started with must match what the row recorded: a transaction's whole input (rows from before
 * inputs were kept carry none to compare), a link's expiry.
 */
function rowOf(
  owner: Exclude<RunOwner, { kind: 'aftercare' }>,
  recorded: { input?: unknown; expiresAt?: string },
) {
  if (owner.kind === 'transaction') {
    const input = JSON.stringify(recorded.input ?? null);
    return {
      table: transactions,
      id: owner.transactionId,
      startedAsRecorded: sql`(${transactions.workflowInput} is null or ${transactions.workflowInput} = ${input}::jsonb)`,
    };
  }
  return {
    table: paymentLinks,
    id: owner.linkId,
    startedAsRecorded: recorded.expiresAt
      ? sql`${paymentLinks.expiresAt} = ${recorded.expiresAt}::timestamptz`
      : sql`false`,
  };
}

/**
 * Binds the first run of a record's workflow: claims the record for `run`'s chain when no run holds it
 * yet, and only for the input the service recorded for it. `recorded` is what the run says it was started
 * with: a transaction's whole input, a link's expiry, an aftercare run's ticket. True when claimed now.
 */
export async function claimRun(
  db: Db,
  owner: RunOwner,
  run: RunRef,
  recorded: { input?: unknown; expiresAt?: string; ticket?: string },
): Promise<boolean> {
  if (owner.kind === 'aftercare') {
    if (!recorded.ticket) return false;
    const rows = await db
      .update(aftercareRuns)
      .set({ runChain: run.chain, runId: run.runId })
      .where(
        and(
          eq(aftercareRuns.ticket, recorded.ticket),
          eq(aftercareRuns.transactionId, owner.transactionId),
          isNull(aftercareRuns.runChain),
        ),
      )
      .returning({ ticket: aftercareRuns.ticket });
    return rows.length > 0;
  }
  const row = rowOf(owner, recorded);
  const { rows } = await db.execute(sql`
    update ${row.table} set run_chain = ${run.chain}, run_id = ${run.runId}
    where id = ${row.id} and run_chain is null and ${row.startedAsRecorded}
    returning id`);
  return rows.length > 0;
}

/**
 * The run bound to a record, or undefined when there is no such record. For an aftercare workflow, which
 * has one record per run, the record of `run` (by its id, or its chain for a Reset's new run).
 */
export async function boundRun(db: Db, owner: RunOwner, run: RunRef): Promise<BoundRun | undefined> {
  if (owner.kind === 'aftercare') {
    const [row] = await db
      .select({ chain: aftercareRuns.runChain, runId: aftercareRuns.runId })
      .from(aftercareRuns)
      .where(
        and(
          eq(aftercareRuns.transactionId, owner.transactionId),
          or(eq(aftercareRuns.runId, run.runId), eq(aftercareRuns.runChain, run.chain)),
        ),
      );
    return row && { ...row, auditId: owner.transactionId, status: 'aftercare' };
  }
  const row = rowOf(owner, {});
  const { rows } = await db.execute<{ chain: string | null; runId: string | null; status: string }>(sql`
    select run_chain as chain, run_id as "runId", status from ${row.table} where id = ${row.id}`);
  return rows[0] && { ...rows[0], auditId: row.id };
}

/**
 * Moves a record's acting run to `run`, a run of the chain bound to it (a Reset's new run); a record with
 * no chain yet (opened before runs were bound, still running) is bound to `run`'s chain. False when
 * another chain holds it.
 */
export async function moveRun(db: Db, owner: RunOwner, run: RunRef): Promise<boolean> {
  if (owner.kind === 'aftercare') {
    const rows = await db
      .update(aftercareRuns)
      .set({ runId: run.runId })
      .where(and(eq(aftercareRuns.transactionId, owner.transactionId), eq(aftercareRuns.runChain, run.chain)))
      .returning({ ticket: aftercareRuns.ticket });
    return rows.length > 0;
  }
  const row = rowOf(owner, {});
  const { rows } = await db.execute(sql`
    update ${row.table} set run_chain = ${run.chain}, run_id = ${run.runId}
    where id = ${row.id} and (run_chain is null or run_chain = ${run.chain})
    returning id`);
  return rows.length > 0;
}

/** Records the ticket an aftercare run the service is about to start will claim. */
export async function recordAftercareTicket(db: Db, transactionId: string, ticket: string): Promise<void> {
  await db.insert(aftercareRuns).values({ ticket, transactionId });
}
