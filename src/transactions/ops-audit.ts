import { asc, eq } from 'drizzle-orm';
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

/** A transaction's audit trail, oldest first. */
export async function opsTrail(db: Db, transactionId: string) {
  return db
    .select()
    .from(opsActions)
    .where(eq(opsActions.transactionId, transactionId))
    .orderBy(asc(opsActions.createdAt), asc(opsActions.id));
}
