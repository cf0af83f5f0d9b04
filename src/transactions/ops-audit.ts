import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Db, Tx } from '../db/client';
import { opsActions } from '../db/schema/index';

export interface OpsActionRecord {
  transactionId: string;
  /** Makes a retried write land once. */
  key: string;
  actor: string;
  action: string;
  reason: string | null;
  statusBefore: string;
  statusAfter: string;
}

/** Records an ops action; a second write with the same key changes nothing. */
export async function recordOpsAction(db: Db | Tx, record: OpsActionRecord): Promise<void> {
  await db
    .insert(opsActions)
    .values(record)
    .onConflictDoNothing({ target: [opsActions.transactionId, opsActions.key] });
}

/**
 * Sets the status an ops action left the transaction in, once it is known (a retry's: after the attempt it
 * asked for). Writing it again with the same status changes nothing.
 */
export async function recordOpsOutcome(
  db: Db,
  record: { transactionId: string; key: string; statusAfter: string },
): Promise<void> {
  await db
    .update(opsActions)
    .set({ statusAfter: record.statusAfter })
    .where(and(eq(opsActions.transactionId, record.transactionId), eq(opsActions.key, record.key)));
}

/** A transaction's audit trail, oldest first. */
export async function opsTrail(db: Db, transactionId: string) {
  return db
    .select()
    .from(opsActions)
    .where(eq(opsActions.transactionId, transactionId))
    .orderBy(asc(opsActions.createdAt), asc(opsActions.id));
}

/** The ops actions that ask for another try now: `retryNow`, and its webhook and redelivery kin. */
const RETRIES = ['retryNow', 'retryWebhook', 'redeliverWebhooks'];

/**
 * Whether ops asked for another try of this transaction (or one of its webhooks): what the sandbox's
 * rehearsal cards and webhook endpoint wait for (docs/sandbox.md, rehearsing a stuck payment).
 */
export async function opsRetried(db: Db, transactionId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: opsActions.id })
    .from(opsActions)
    .where(and(eq(opsActions.transactionId, transactionId), inArray(opsActions.action, RETRIES)))
    .limit(1);
  return row !== undefined;
}
