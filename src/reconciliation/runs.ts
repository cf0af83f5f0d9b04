import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { reconciliationBreaks, reconciliationRuns } from '../db/schema/index';
import { recordFindings, UNSETTLED, type Recorded } from './breaks';
import type { BlockRange, ReconciliationLeg } from './leg';

export interface Window {
  from: string;
  to: string;
  /** Each watched chain node's blocks, for the chain leg: from the previous run's cut-off to this one's. */
  blocks?: Record<string, BlockRange>;
}

/** How a run being planned finds each chain node's cut-off, and the first block of a node never read. */
export interface ChainCutOffs {
  cutOffs(): Promise<Record<string, string>>;
  firstBlock(nodeId: string, cutOff: string): Promise<string>;
  /** Blocks of one node a run reads at most: a backlog (a first run, a paused schedule) takes several runs. */
  blocksPerRun: bigint;
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
  chains?: ChainCutOffs,
): Promise<Window> {
  const [existing] = await db.select().from(reconciliationRuns).where(eq(reconciliationRuns.id, run.id));
  if (existing) return windowOf(existing);
  const to = run.until ? new Date(run.until) : new Date(Date.now() - run.lagMs);
  let since = run.since ? new Date(run.since) : undefined;
  const [latest] = await db
    .select({ windowEnd: reconciliationRuns.windowEnd, blocks: reconciliationRuns.blocks })
    .from(reconciliationRuns)
    .where(and(eq(reconciliationRuns.trigger, 'schedule'), eq(reconciliationRuns.state, 'finished')))
    .orderBy(desc(reconciliationRuns.windowEnd))
    .limit(1);
  since ??= latest?.windowEnd ?? new Date(0);
  if (since > to) since = to;
  // A chain's blocks follow the scheduled runs' cut-offs, whatever window a run by hand is given.
  const blocks = chains ? await blockRanges(chains, latest?.blocks) : {};
  await db
    .insert(reconciliationRuns)
    .values({
      id: run.id,
      trigger: run.trigger,
      sources: run.sources.join(','),
      windowStart: since,
      windowEnd: to,
      blocks,
    })
    .onConflictDoNothing();
  const [row] = await db.select().from(reconciliationRuns).where(eq(reconciliationRuns.id, run.id));
  return windowOf(row!);
}

/**
 * Each watched node's blocks for a run: from just past the previous scheduled run's (from the node's first
 * block when none read it) to its cut-off now, at most `blocksPerRun` of them. Empty (`from` past `to`)
 * when the watcher read nothing new, or went back to read a lost block again.
 */
export async function blockRanges(
  chains: ChainCutOffs,
  previous: Record<string, BlockRange> | undefined,
): Promise<Record<string, BlockRange>> {
  const blocks: Record<string, BlockRange> = {};
  for (const [nodeId, cutOff] of Object.entries(await chains.cutOffs())) {
    const before = previous?.[nodeId]?.to;
    const from = before === undefined ? await chains.firstBlock(nodeId, cutOff) : String(BigInt(before) + 1n);
    const last = BigInt(from) + chains.blocksPerRun - 1n;
    blocks[nodeId] = { from, to: last < BigInt(cutOff) ? String(last) : cutOff };
  }
  return blocks;
}

function windowOf(row: typeof reconciliationRuns.$inferSelect): Window {
  return {
    from: row.windowStart.toISOString(),
    to: row.windowEnd.toISOString(),
    ...(Object.keys(row.blocks).length > 0 ? { blocks: row.blocks } : {}),
  };
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
    ...(run.window.blocks ? { blocks: run.window.blocks } : {}),
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
