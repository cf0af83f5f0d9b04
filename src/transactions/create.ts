import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { SearchAttributePair } from '@temporalio/common';
import type { Db, Tx } from '../db/client';
import { idempotencyKeys, transactions } from '../db/schema/index';
import { ApiError } from '../platform/errors';
import { newTransactionId } from '../ciphers/ids';
import { updateKeyOf } from '../ciphers/update-proof';
import { formatMinor } from '../lib/money';
import {
  searchAttributes,
  type TransactionKind,
  type TransactionWorkflow,
  type WorkflowInput,
} from '../contracts';
import { startWithFirstAnswer } from '../temporal/client';
import { transactionBody, type TransactionBody, type TransactionRow } from './view';
import { vaultCard, vaultCardFor, type CardToVault } from './card-vault';
import { findTransaction } from './lookup';
import type { MerchantScope, TransactionDeps } from './deps';

type NewRow = typeof transactions.$inferInsert;

/** A transaction to create: its claim row, card data vaulted with it, and the workflow that carries it. */
export interface NewTransaction<Name extends TransactionWorkflow> {
  kind: TransactionKind;
  orderId: string | null;
  /** Keyed digest of the validated request: a repeat with another digest is an order id conflict. */
  requestHash: string;
  /** Projection columns known at create time; `details` may be read by SQL as the row is inserted. */
  row: Omit<
    NewRow,
    'id' | 'merchantId' | 'mode' | 'kind' | 'orderId' | 'requestHash' | 'message' | 'details'
  > & {
    details?: NewRow['details'] | SQL;
  };
  card?: CardToVault;
  /** The merchant's `Idempotency-Key` for this create, if it sent one (docs/api.md). */
  idempotencyKey?: string;
  workflow: Name;
  input: (transactionId: string) => WorkflowInput<Name> & { transactionId: string };
}

/**
 * How a create came, beyond its fields: the payment link the customer came through, and the merchant's
 * `Idempotency-Key` header.
 */
export interface CreateOrigin {
  paymentLinkId?: string;
  idempotencyKey?: string;
}

export interface Created {
  body: TransactionBody;
  /** A repeat of an earlier request with the same `order_id`: the original transaction. */
  replayed: boolean;
}

/**
 * Claims the `order_id` (vaulting the card in the same statement), starts the workflow and
 * answers with its first outcome, as the workflow returned it. A repeat of the same request answers the
 * transaction as it stands (and starts its workflow if a crash stopped that); a different request under
 * the same `order_id` is a 409. Concurrent duplicates meet at the unique index.
 */
export async function createTransaction<Name extends TransactionWorkflow>(
  deps: TransactionDeps,
  merchant: MerchantScope,
  request: NewTransaction<Name>,
): Promise<Created> {
  const inputFor = (transactionId: string) => ({
    ...request.input(transactionId),
    notifies: Boolean(request.row.webhookUrl),
    updateKey: updateKeyOf(deps.config.MASTER_KEY),
  });
  const claim = await claimTransaction(deps.db, deps.config.MASTER_KEY, merchant, request, inputFor);
  const transactionId = claim.row.id;
  const outcome = await startWithFirstAnswer(deps.temporal, {
    workflow: request.workflow,
    // The input the row recorded: its workflow's run is the service's only with it (docs/operations.md).
    input: (claim.row.workflowInput ?? inputFor(transactionId)) as WorkflowInput<Name> & {
      transactionId: string;
    },
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    searchAttributes: searchAttributesFor(merchant, request),
    ...describeForOps(merchant, request),
    timeoutMs: deps.config.FIRST_ANSWER_TIMEOUT_MS,
    onLateError: (error) =>
      deps.log.error({ err: error }, `workflow start failed after the deadline: ${transactionId}`),
  });
  if (outcome.kind === 'timeout') deps.log.warn({ transactionId }, 'no first answer within the deadline');
  // The workflow answers once its first status is projected: the row it wrote is the answer (with no
  // answer in time, the claim as it stands: PENDING).
  const row =
    outcome.kind === 'timeout' && !claim.replayed
      ? claim.row
      : ((await findTransaction(deps.db, transactionId)) ?? claim.row);
  return { body: transactionBody(row), replayed: claim.replayed };
}

const KIND_NAMES = {
  card: 'Card payment',
  payout: 'Card payout',
  ramp: 'Crypto ramp',
  crypto_payin: 'Crypto payin',
  apm: 'APM payment',
} as const;

/**
 * What the Temporal UI shows of the transaction: kind, amount, mode, merchant and order id, never
 * personal data. Carried through the payload codec like every payload.
 */
function describeForOps(merchant: MerchantScope, request: NewTransaction<TransactionWorkflow>) {
  const { row } = request;
  const amount =
    row.amountMinor !== undefined && row.amountMinor !== null
      ? formatMinor(row.amountMinor, row.currency)
      : (row.amountDecimal ?? '?');
  // Two Markdown lines (a hard break between them): the UI shows details in a short box.
  const lines = [
    `**Kind:** ${request.kind} · **Amount:** ${amount} ${row.currency} · **Mode:** ${merchant.mode}`,
    `**Merchant:** ${merchant.merchantId} · **Order id:** ${request.orderId ?? 'none'}`,
  ];
  return {
    staticSummary: `${KIND_NAMES[request.kind]} · ${amount} ${row.currency} · ${merchant.mode}`,
    staticDetails: lines.join('  \n'),
  };
}

function searchAttributesFor(merchant: MerchantScope, request: NewTransaction<TransactionWorkflow>) {
  const pairs: SearchAttributePair[] = [
    { key: searchAttributes.merchantId, value: merchant.merchantId },
    { key: searchAttributes.mode, value: merchant.mode },
    { key: searchAttributes.kind, value: request.kind },
    { key: searchAttributes.status, value: 'PENDING' },
  ];
  if (request.orderId) pairs.push({ key: searchAttributes.orderId, value: request.orderId });
  return pairs;
}

async function claimTransaction(
  db: Db,
  masterKey: string,
  merchant: MerchantScope,
  request: NewTransaction<TransactionWorkflow>,
  inputFor: (transactionId: string) => object,
): Promise<{ row: TransactionRow; replayed: boolean }> {
  const id = newTransactionId();
  /** The row's insert, answering it; none when the order id is taken. */
  const insert = (q: Db | Tx) =>
    q
      .insert(transactions)
      .values({
        ...request.row,
        id,
        workflowInput: inputFor(id) as Record<string, unknown>,
        merchantId: merchant.merchantId,
        mode: merchant.mode,
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
      .returning();
  const key = request.idempotencyKey;
  if (!key) {
    // Most creates: one statement claims the order id and vaults the card with it, atomic without a
    // database transaction of its own.
    let inserted: TransactionRow | undefined;
    if (request.card) {
      const claimed = db.$with('claimed').as(insert(db));
      const vaulted = vaultCardFor(claimed, masterKey, request.card);
      [inserted] = await db.with(claimed, vaulted).select().from(claimed);
    } else [inserted] = await insert(db);
    if (inserted) return { row: inserted, replayed: false };
    return { row: await sameOrder(db, merchant, request), replayed: true };
  }
  const keyRow = and(
    eq(idempotencyKeys.merchantId, merchant.merchantId),
    eq(idempotencyKeys.mode, merchant.mode),
    eq(idempotencyKeys.key, key),
  );
  return db.transaction(async (tx) => {
    // The key first: a repeat (or a concurrent twin, once the first commits) finds the transaction it named.
    const [claimed] = await tx
      .insert(idempotencyKeys)
      .values({
        merchantId: merchant.merchantId,
        mode: merchant.mode,
        key,
        requestHash: request.requestHash,
        transactionId: id,
      })
      .onConflictDoNothing()
      .returning();
    if (!claimed) {
      const [known] = await tx.select().from(idempotencyKeys).where(keyRow);
      if (!known || known.requestHash !== request.requestHash) throw new ApiError('IDEMPOTENCY_CONFLICT');
      const [first] = await tx.select().from(transactions).where(eq(transactions.id, known.transactionId));
      if (!first) throw new ApiError('IDEMPOTENCY_CONFLICT');
      return { row: first, replayed: true };
    }
    const [inserted] = await insert(tx);
    if (inserted) {
      if (request.card) await vaultCard(tx, masterKey, inserted.id, request.card);
      return { row: inserted, replayed: false };
    }
    const existing = await sameOrder(tx, merchant, request);
    // A repeat by order id under a new key: the key names the transaction the order id already has.
    await tx.update(idempotencyKeys).set({ transactionId: existing.id }).where(keyRow);
    return { row: existing, replayed: true };
  });
}

/**
 * The transaction that already holds the request's order id, when it is a repeat of the same request; a
 * different request under that order id is a conflict. The card was vaulted with the first claim; a repeat
 * never vaults it again (a used number must not return).
 */
async function sameOrder(
  q: Db | Tx,
  merchant: MerchantScope,
  request: NewTransaction<TransactionWorkflow>,
): Promise<TransactionRow> {
  const [existing] = await q
    .select()
    .from(transactions)
    .where(
      and(
        eq(transactions.merchantId, merchant.merchantId),
        eq(transactions.mode, merchant.mode),
        eq(transactions.orderId, request.orderId!),
      ),
    );
  if (!existing || existing.requestHash !== request.requestHash) throw new ApiError('ORDER_CONFLICT');
  return existing;
}

/** How long a create's `Idempotency-Key` is kept (docs/api.md): a retry within a day finds it. */
export const IDEMPOTENCY_KEY_HOURS = 24;

/** Removes keys older than IDEMPOTENCY_KEY_HOURS (the periodic maintenance job); answers how many. */
export async function pruneIdempotencyKeys(db: Db): Promise<number> {
  const removed = await db
    .delete(idempotencyKeys)
    .where(sql`${idempotencyKeys.createdAt} < now() - make_interval(hours => ${IDEMPOTENCY_KEY_HOURS})`);
  return removed.rowCount ?? 0;
}
