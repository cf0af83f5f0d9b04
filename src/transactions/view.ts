import { canonicalDecimal } from '../lib/units';
import type { transactions } from '../db/schema/index';
import { JsonNumber } from '../lib/json';
import { isFinal } from '../lib/vocabulary';
import { DECIMAL_DETAIL_KEYS, type TransactionDetails, type TransactionKind } from '../contracts';

export type TransactionRow = typeof transactions.$inferSelect;

/** The columns a transaction's body is made of (`transactionBody`): what the status lookup reads. */
export const BODY_COLUMNS = [
  'id',
  'kind',
  'status',
  'message',
  'redirectUrl',
  'amountMinor',
  'amountDecimal',
  'currency',
  'orderId',
  'customer',
  'refunded',
  'refundedAt',
  'chargeback',
  'chargebackAt',
  'descriptor',
  'walletId',
  'details',
] as const satisfies readonly (keyof TransactionRow)[];

/** What a transaction's body is made of: a whole row will do, and so will the status lookup's. */
export type BodyRow = Pick<TransactionRow, (typeof BODY_COLUMNS)[number]>;

/** The `{status, message, redirect_url?, data}` body shared by create answers, status lookups and webhooks. */
export interface TransactionBody {
  status: string;
  message: string;
  redirect_url?: string;
  data: Record<string, unknown>;
}

/** A row's details, typed by its kind. */
export function detailsOf<Kind extends TransactionKind>(
  row: Pick<TransactionRow, 'details'> & { kind: Kind },
): Partial<TransactionDetails[Kind]> {
  return row.details as Partial<TransactionDetails[Kind]>;
}

function iso(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}

/**
 * Minor units stay a bigint (written as an exact JSON number); decimals stay exact, written as the create
 * answer wrote them (Postgres pads `numeric(38, 18)` with zeros: 25 comes back as 25.000000000000000000).
 */
function amountOf(row: BodyRow): bigint | JsonNumber | null {
  if (row.amountMinor !== null) return row.amountMinor;
  if (row.amountDecimal !== null)
    return new JsonNumber(canonicalDecimal(row.amountDecimal) ?? row.amountDecimal);
  return null;
}

/** Decimal strings in `details` are exact amounts: emitted as JSON numbers without passing through a float. */
function exactNumbers(details: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(details)) {
    out[key] = DECIMAL_DETAIL_KEYS.includes(key) && typeof value === 'string' ? new JsonNumber(value) : value;
  }
  return out;
}

export function transactionData(row: BodyRow): Record<string, unknown> {
  const base = {
    amount: amountOf(row),
    currency: row.currency,
    order_id: row.orderId,
    transaction_id: row.id,
    customer: row.customer,
  };
  const refund = { status: row.refunded, refund_date: iso(row.refundedAt) };
  const chargeback = { status: row.chargeback, chargeback_date: iso(row.chargebackAt) };
  switch (row.kind) {
    case 'card':
      return {
        ...base,
        refund,
        chargeback,
        descriptor: row.descriptor,
        is_card_WL: detailsOf({ ...row, kind: 'card' }).is_card_WL === true,
      };
    case 'payout':
      return { ...base, wallet_id: row.walletId };
    case 'apm':
      return {
        ...base,
        refund,
        chargeback,
        descriptor: row.descriptor,
        // No card is used: the interface still carries the flag for card and APM alike.
        is_card_WL: false,
        payment_method: detailsOf({ ...row, kind: 'apm' }).payment_method ?? null,
      };
    case 'crypto_payin':
      // The interface's crypto payin status carries no chargeback (section 2.1).
      return { ...base, refund, ...exactNumbers(row.details) };
    case 'ramp':
      return {
        transaction_id: row.id,
        order_id: row.orderId,
        customer: row.customer,
        ...exactNumbers(row.details),
      };
  }
}

export function transactionBody(row: BodyRow): TransactionBody {
  return {
    status: row.status,
    message: row.message,
    ...(row.redirectUrl && !isFinal(row.status) ? { redirect_url: row.redirectUrl } : {}),
    data: transactionData(row),
  };
}
