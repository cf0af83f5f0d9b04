import { Context } from '@temporalio/activity';
import { and, eq, lt, notInArray, or, sql } from 'drizzle-orm';
import type { Db } from '../src/db/client';
import { isSandboxConnector } from '../src/schemas/sandbox-cards';
import { recordOpsAction } from '../src/transactions/ops-audit';
import { purgeVaultedCard, purgeVaultedCardWith } from '../src/transactions/card-vault';
import { activeTerminals } from '../src/merchants/terminals';
import { transactions } from '../src/db/schema/index';
import { finalAlready } from './authority';
import { isFinal, type Mode, type TransactionKind, type TransactionStatus } from '../src/contracts';
import { TRANSACTION_STATUSES } from '../src/lib/vocabulary';
import type { WorkerMetrics } from '../src/platform/metrics';

export interface ProjectInput {
  transactionId: string;
  /** Grows with every change the workflow makes; older writes are ignored. */
  version: number;
  status: TransactionStatus;
  message: string;
  terminalId?: string;
  /** The acquirer's reference for the card payment it authorized. */
  acquirerReference?: string;
  descriptor?: string | null;
  redirectUrl?: string | null;
  details?: Record<string, unknown>;
  /** Marks the transaction refunded (a returned crypto deposit). */
  refunded?: boolean;
  /** An ops action this write applies: recorded in the same database transaction. */
  audit?: { reason: string; actor: string; action: string; key: string; statusBefore: string };
  /** Removes the card number and CVV, in the same statement (`purgeVaultedCardWith`). */
  purgeCard?: boolean;
}

/** Which terminals a transaction may be routed through: the pinned one, or every active one of its kind. */
export interface TerminalQuery {
  merchantId: string;
  mode: Mode;
  kind: TransactionKind;
  terminalId?: string;
}

export interface TerminalChoice {
  terminalId: string;
  connector: string;
  descriptor: string | null;
}

/**
 * `allowSandboxInLive`: whether live transactions may be routed to sandbox connectors (docs/connectors.md).
 * `metrics`: counts each transaction once, when its final status is first written.
 */
export function projectionActivities(
  db: Db,
  options: { allowSandboxInLive: boolean; metrics?: Pick<WorkerMetrics, 'transactionsFinal'> } = {
    allowSandboxInLive: false,
  },
) {
  return {
    /**
     * Writes the workflow's state to the status table; a replay or a late retry is a no-op. A final status
     * another run wrote (the run a Reset replaced) is never changed: the write fails as `alreadyFinal`,
     * with that state, and the run ends with it.
     */
    async project(input: ProjectInput): Promise<boolean> {
      const runId = Context.current().info.workflowExecution?.runId ?? null;
      const set: Partial<typeof transactions.$inferInsert> = {
        status: input.status,
        message: input.message,
        version: input.version,
        statusRunId: runId,
        updatedAt: new Date(),
      };
      if (input.terminalId !== undefined) set.terminalId = input.terminalId;
      if (input.acquirerReference !== undefined) set.acquirerReference = input.acquirerReference;
      if (input.descriptor !== undefined) set.descriptor = input.descriptor;
      if (input.redirectUrl !== undefined) set.redirectUrl = input.redirectUrl;
      if (input.refunded) {
        set.refunded = true;
        set.refundedAt = new Date();
      }
      const write = async (tx: Db) => {
        // The purge rides in the update's statement (a CTE Postgres runs whatever the update finds).
        const updated = await (input.purgeCard ? tx.with(purgeVaultedCardWith(tx, input.transactionId)) : tx)
          .update(transactions)
          .set({
            ...set,
            ...(input.details
              ? { details: sql`${transactions.details} || ${JSON.stringify(input.details)}::jsonb` }
              : {}),
          })
          .where(
            and(
              eq(transactions.id, input.transactionId),
              lt(transactions.version, input.version),
              or(
                notInArray(transactions.status, FINAL_STATUSES),
                runId === null ? undefined : eq(transactions.statusRunId, runId),
              ),
            ),
          )
          .returning({
            kind: transactions.kind,
            // A sub-select in RETURNING reads the row as it was before this statement changed it.
            previous: sql<TransactionStatus>`(select t.status from ${transactions} t where t.id = ${input.transactionId})`,
          });
        if (input.audit) {
          await recordOpsAction(tx, {
            transactionId: input.transactionId,
            ...input.audit,
            statusAfter: input.status,
          });
        }
        return updated[0];
      };
      // One statement is atomic on its own: BEGIN and COMMIT only around a write whose audit record must
      // commit with it (they would be two of the three statements of most moves, and their round trips).
      // The purge needs no transaction: it is idempotent, and no later step needs the card whatever the
      // update finds (a retry purges again; a run that finds another's final status purged all the same).
      const row = input.audit ? await db.transaction(write) : await write(db);
      // Counted once committed: a commit that fails is retried and counted then.
      if (row && isFinal(input.status) && !isFinal(row.previous)) {
        options.metrics?.transactionsFinal.inc({ kind: row.kind, status: input.status });
      }
      if (!row) await refuseChangingAnotherRunsFinal(db, input, runId);
      return row !== undefined;
    },

    /** Active terminals for the kind by priority, or just the pinned one. */
    async listTerminals(input: TerminalQuery): Promise<TerminalChoice[]> {
      const rows = await activeTerminals(db, input, input.kind, input.terminalId || undefined);
      // Defence in depth behind the start-up check: a live payment never reaches a sandbox connector.
      if (input.mode === 'live' && !options.allowSandboxInLive) {
        return rows.filter((row) => !isSandboxConnector(row.connector));
      }
      return rows;
    },

    /** Removes the card number and CVV once no step needs them (`purgeVaultedCard`). */
    async purgeCardData(input: { transactionId: string }): Promise<void> {
      await purgeVaultedCard(db, input.transactionId);
    },
  };
}

const FINAL_STATUSES = TRANSACTION_STATUSES.filter(isFinal);

/**
 * After a write that changed nothing: when another run made the transaction final (the run a Reset
 * replaced), nothing this run writes changes it, and a run that ends otherwise than it did (another status
 * or message) is told so, with the final state, and ends with it. A stale write of this run (a replay, a
 * late retry) stays a no-op, as does another run's write of the same end.
 */
async function refuseChangingAnotherRunsFinal(
  db: Db,
  input: { transactionId: string; status: TransactionStatus; message: string },
  runId: string | null,
): Promise<void> {
  const [row] = await db
    .select({ status: transactions.status, message: transactions.message, runId: transactions.statusRunId })
    .from(transactions)
    .where(eq(transactions.id, input.transactionId));
  if (!row || !isFinal(row.status) || row.runId === runId) return;
  if (row.status === input.status && row.message === input.message) return;
  throw finalAlready({ status: row.status, message: row.message });
}
