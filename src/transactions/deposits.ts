import { createHash, randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client';
import { cryptoDeposits } from '../db/schema/index';
import { findCryptoAsset } from '../coins/catalogue';
import { closeWindowUpdate, depositUpdate, type DepositDisposition } from '../contracts';
import { sendUpdate } from '../temporal/client';
import { parseUnits } from '../lib/units';
import { detailsOf, transactionBody, type TransactionBody, type TransactionRow } from './view';
import { findTransaction, lookupTransaction } from './lookup';
import type { MerchantScope } from './deps';
import { ApiError, fieldError } from '../platform/errors';
import { isFinal } from '../lib/vocabulary';

export interface DepositRef {
  transactionId: string;
  txHash: string;
  /** Crypto units, exact decimal text. */
  amount: string;
  /** The sending address, where a refund goes. */
  sender?: string;
}

export type DepositOutcome =
  { txHash: string; disposition: DepositDisposition } | 'not-accepting' | { invalid: string };

/** The asset a crypto transaction is paid in, when it takes deposits at all. */
export function assetOf(row: TransactionRow): { code: string; network: string } | undefined {
  if (row.kind === 'crypto_payin') {
    const d = detailsOf({ ...row, kind: 'crypto_payin' });
    return d.crypto_currency && d.crypto_network
      ? { code: d.crypto_currency, network: d.crypto_network }
      : undefined;
  }
  if (row.kind === 'ramp') {
    const d = detailsOf({ ...row, kind: 'ramp' });
    const offramp = d.transaction_type === 'OFFRAMP' && d.crypto && d.crypto_network;
    return offramp ? { code: d.crypto!, network: d.crypto_network! } : undefined;
  }
  return undefined;
}

/**
 * Records a deposit, or (`heldAmount`) the part of a counted deposit that cannot be refunded, as held for
 * ops with the reason. A deposit recorded already keeps its disposition unless it was counted and is now
 * held by its workflow.
 */
export async function holdDeposit(
  db: Db,
  input: DepositRef & { reason: string; countedInPayment?: boolean; heldAmount?: string },
): Promise<boolean> {
  const whole = input.heldAmount === undefined || input.heldAmount === input.amount;
  const held = {
    disposition: whole ? ('held' as const) : ('counted' as const),
    reason: input.reason,
    heldAmount: input.heldAmount ?? input.amount,
    countedInPayment: input.countedInPayment ?? false,
  };
  const inserted = await db
    .insert(cryptoDeposits)
    .values({
      transactionId: input.transactionId,
      txHash: input.txHash,
      amount: input.amount,
      sender: input.sender ?? null,
      ...held,
    })
    .onConflictDoUpdate({
      target: [cryptoDeposits.transactionId, cryptoDeposits.txHash],
      set: { ...held, updatedAt: sql`now()` },
      setWhere: sql`${cryptoDeposits.disposition} = 'counted' and ${input.countedInPayment ?? false}`,
    })
    .returning({ id: cryptoDeposits.id });
  return inserted.length > 0;
}

/** The sandbox chain's deposits come from a sender derived from their hash, so they can be refunded. */
export function sandboxSender(txHash: string): string {
  return `sandbox-${createHash('sha256').update(txHash).digest('hex').slice(0, 32)}`;
}

export function randomTxHash(): string {
  return `0x${randomBytes(32).toString('hex')}`;
}

/**
 * A deposit seen for a transaction's address (the sandbox chain's simulated ones included) goes to the
 * transaction's workflow, which counts or refunds it. Once the workflow has closed, or when it refuses the
 * deposit, the deposit is held for ops with the reason, so no deposit is ever dropped.
 */
export async function submitDeposit(
  db: Db,
  temporal: Client,
  row: TransactionRow,
  deposit: { amount: string; txHash: string; sender?: string; source: 'chain' | 'sandbox' },
): Promise<DepositOutcome> {
  const { amount, txHash, sender, source } = deposit;
  const asset = assetOf(row);
  if (!asset) return 'not-accepting';
  const found = await findCryptoAsset(db, asset.code, asset.network);
  const units = found ? parseUnits(amount, found.decimals) : undefined;
  if (!found || units === undefined)
    return { invalid: `The amount field must have at most ${found?.decimals ?? 0} decimal places.` };
  const outcome = await sendUpdate(
    temporal,
    row.id,
    depositUpdate,
    { txHash, units: units.toString(), ...(sender ? { sender } : {}), source },
    row.runId,
  );
  if (outcome.kind === 'done') return { txHash, disposition: outcome.result.disposition };
  // No workflow to take it while the transaction is still open: its start is still under way (the create
  // answered PENDING before its workflow began). Not late: the caller sends it again (the same tx hash
  // counts once).
  if (outcome.kind === 'closed' && !isFinal(((await findTransaction(db, row.id)) ?? row).status))
    throw new ApiError('UNAVAILABLE');
  const held = await holdDeposit(db, {
    transactionId: row.id,
    txHash,
    amount,
    sender,
    reason:
      outcome.kind === 'refused'
        ? `Refused by its transaction: ${outcome.message || 'no reason given'}`
        : 'Arrived after the transaction closed.',
  });
  return { txHash, disposition: held ? 'held' : 'duplicate' };
}

/**
 * The chain watcher's hand-over of a confirmed deposit: to the transaction's workflow, answered once the
 * workflow has accounted it (the settlement it may complete takes its own time; the watcher serves every
 * customer of its node). A deposit the workflow refuses, or one for a transaction that has closed, is held
 * for ops with the reason. A hand-over that does not complete in time throws, to be tried again (the
 * workflow counts a repeated deposit once).
 */
export async function handOverDeposit(
  db: Db,
  temporal: Client,
  row: TransactionRow,
  deposit: DepositRef & { units: bigint },
): Promise<DepositDisposition> {
  const outcome = await temporal.withDeadline(Date.now() + HAND_OVER_TIMEOUT_MS, () =>
    sendUpdate(
      temporal,
      row.id,
      depositUpdate,
      {
        txHash: deposit.txHash,
        units: deposit.units.toString(),
        ...(deposit.sender ? { sender: deposit.sender } : {}),
        source: 'chain',
        answer: 'accounted',
      },
      row.runId,
    ),
  );
  if (outcome.kind === 'done') return outcome.result.disposition;
  const held = await holdDeposit(db, {
    ...deposit,
    reason:
      outcome.kind === 'refused'
        ? `Refused by its transaction: ${outcome.message || 'no reason given'}`
        : 'Arrived after the transaction closed.',
  });
  return held ? 'held' : 'duplicate';
}

/** How long one hand-over may wait for the workflow to take a deposit. */
const HAND_OVER_TIMEOUT_MS = 10_000;

/**
 * What of a counted deposit stayed in the payment, in units of 10^-18 of the asset (the column's scale):
 * its amount less any excess sent back or held.
 */
export function keptInPayment(deposit: {
  amount: string;
  refundAmount: string | null;
  heldAmount: string | null;
}): bigint {
  const units = (value: string | null) => (value ? parseUnits(value, 18)! : 0n);
  return units(deposit.amount) - units(deposit.refundAmount) - units(deposit.heldAmount);
}

/** A transaction's deposits counted towards its payment, in the order they were recorded. */
export function countedDeposits(db: Db | Tx, transactionId: string) {
  return db
    .select()
    .from(cryptoDeposits)
    .where(and(eq(cryptoDeposits.transactionId, transactionId), eq(cryptoDeposits.disposition, 'counted')))
    .orderBy(asc(cryptoDeposits.id));
}

/**
 * The close-window endpoint (test mode, docs/sandbox.md): ends a ramp's or payin's deposit window now, as
 * if its time had run out, and answers the transaction once the window has closed (what it settles to
 * follows, as at the window's end: the status and the webhook tell).
 */
export async function closeDepositWindow(
  deps: { db: Db; temporal: Client },
  merchant: MerchantScope,
  transactionId: string,
): Promise<TransactionBody> {
  const row = await lookupTransaction(deps.db, merchant, transactionId);
  if (!row || (row.kind !== 'ramp' && row.kind !== 'crypto_payin'))
    throw new ApiError('TRANSACTION_NOT_FOUND');
  const outcome = await sendUpdate(deps.temporal, row.id, closeWindowUpdate, {}, row.runId);
  if (outcome.kind === 'refused') fieldError('transaction_id', outcome.message);
  if (outcome.kind === 'closed') fieldError('transaction_id', 'The deposit window is not open.');
  return transactionBody((await lookupTransaction(deps.db, merchant, row.id)) ?? row);
}
