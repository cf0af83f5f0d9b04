import { and, eq, or, sql } from 'drizzle-orm';
import type { Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { Db, Tx } from '../db/client';
import { transactions } from '../db/schema/index';
import { ApiError } from '../errors';
import { newTransactionId } from '../ciphers/ids';
import { searchAttributes, type TransactionKind } from '../temporal/contracts';
import { startWithFirstAnswer } from '../temporal/client';
import { transactionBody, type TransactionBody, type TransactionRow } from './view';
import type { Logger } from '../log';
import type { Mode } from '../lib/vocabulary';

type NewRow = typeof transactions.$inferInsert;

export interface CreateDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  firstAnswerTimeoutMs: number;
  log: Logger;
}

export interface CreateRequest {
  merchantId: string;
  mode: Mode;
  kind: TransactionKind;
  orderId: string | null;
  requestHash: string;
  /** Projection columns known at create time. */
  row: Omit<NewRow, 'id' | 'merchantId' | 'mode' | 'kind' | 'orderId' | 'requestHash' | 'message'>;
  workflowType: string;
  /** Workflow arguments for a transaction id. */
  args: (transactionId: string) => unknown[];
  /** Runs inside the claim's database transaction, for data that must exist before the workflow starts. */
  beforeStart?: (tx: Tx, transactionId: string) => Promise<void>;
}

export interface CreateResult {
  body: TransactionBody;
  replayed: boolean;
}

/**
 * Claims the `order_id`, then starts the transaction's workflow and answers with its first outcome.
 * A repeat of the same request replays the transaction (and starts its workflow if a crash stopped that);
 * a different request under the same `order_id` is a 409. Concurrent duplicates meet at the unique index.
 */
export async function createTransaction(deps: CreateDeps, request: CreateRequest): Promise<CreateResult> {
  const claim = await claimTransaction(deps.db, request);
  const transactionId = claim.id;
  const outcome = await startWithFirstAnswer(deps.temporal, {
    workflowType: request.workflowType,
    workflowId: transactionId,
    taskQueue: deps.taskQueue,
    args: request.args(transactionId),
    searchAttributes: searchAttributesFor(request),
    timeoutMs: deps.firstAnswerTimeoutMs,
    onLateError: (error) =>
      deps.log.error({ err: error, transactionId }, 'workflow start failed after the deadline'),
  });
  if (outcome.kind === 'timeout') deps.log.warn({ transactionId }, 'no first answer within the deadline');
  const row = await findTransaction(deps.db, transactionId);
  if (!row) throw new Error(`transaction ${transactionId} vanished`);
  return { body: transactionBody(row), replayed: claim.replayed };
}

function searchAttributesFor(request: CreateRequest): SearchAttributePair[] {
  const pairs: SearchAttributePair[] = [
    { key: searchAttributes.merchantId, value: request.merchantId },
    { key: searchAttributes.mode, value: request.mode },
    { key: searchAttributes.kind, value: request.kind },
    { key: searchAttributes.status, value: 'PENDING' },
  ];
  if (request.orderId) pairs.push({ key: searchAttributes.orderId, value: request.orderId });
  return pairs;
}

async function claimTransaction(db: Db, request: CreateRequest): Promise<{ id: string; replayed: boolean }> {
  const id = newTransactionId();
  return db.transaction(async (tx) => {
    const inserted = await tx
      .insert(transactions)
      .values({
        ...request.row,
        id,
        merchantId: request.merchantId,
        mode: request.mode,
        kind: request.kind,
        orderId: request.orderId,
        requestHash: request.requestHash,
        status: 'PENDING',
        message: 'Transaction is being processed.',
      })
      .onConflictDoNothing({
        target: [transactions.merchantId, transactions.mode, transactions.orderId],
        where: sql`${transactions.orderId} is not null`,
      })
      .returning({ id: transactions.id });
    if (inserted.length > 0) {
      await request.beforeStart?.(tx, id);
      return { id, replayed: false };
    }
    const [existing] = await tx
      .select({ id: transactions.id, requestHash: transactions.requestHash })
      .from(transactions)
      .where(
        and(
          eq(transactions.merchantId, request.merchantId),
          eq(transactions.mode, request.mode),
          eq(transactions.orderId, request.orderId!),
        ),
      );
    if (!existing || existing.requestHash !== request.requestHash) throw new ApiError('ORDER_CONFLICT');
    // What `beforeStart` wrote was committed with the claim; a replay never writes it again (the card
    // number of a transaction that has used it must not come back).
    return { id: existing.id, replayed: true };
  });
}

export async function findTransaction(db: Db, id: string): Promise<TransactionRow | undefined> {
  const [row] = await db.select().from(transactions).where(eq(transactions.id, id));
  return row;
}

/** Looks `id` up as a transaction id, then as an order id, among one merchant's transactions of one mode. */
export async function lookupTransaction(
  db: Db,
  merchantId: string,
  mode: Mode,
  id: string,
): Promise<TransactionRow | undefined> {
  // One round trip: a transaction id match sorts before an order id match.
  const [row] = await db
    .select()
    .from(transactions)
    .where(
      and(
        eq(transactions.merchantId, merchantId),
        eq(transactions.mode, mode),
        or(eq(transactions.id, id), eq(transactions.orderId, id)),
      ),
    )
    .orderBy(sql`${transactions.id} = ${id} desc`)
    .limit(1);
  return row;
}
