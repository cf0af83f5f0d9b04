import type { transactions } from '../db/schema/index';
import { JsonNumber } from '../lib/json';

export type TransactionRow = typeof transactions.$inferSelect;

/** The `{status, message, redirect_url?, data}` body shared by create answers, status lookups and webhooks. */
export interface TransactionBody {
  status: string;
  message: string;
  redirect_url?: string;
  data: Record<string, unknown>;
}

function iso(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}

/** Minor units stay a bigint (written as an exact JSON number); decimals stay their exact text. */
function amountOf(row: TransactionRow): bigint | JsonNumber | null {
  if (row.amountMinor !== null) return row.amountMinor;
  if (row.amountDecimal !== null) return new JsonNumber(row.amountDecimal);
  return null;
}

/** Decimal strings in `details` are exact amounts: emitted as JSON numbers without passing through a float. */
function exactNumbers(details: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(details)) {
    out[key] = keys.includes(key) && typeof value === 'string' ? new JsonNumber(value) : value;
  }
  return out;
}

const DECIMAL_DETAIL_KEYS = ['fiat_amount', 'crypto_amount', 'crypto_paid_amount', 'rate', 'refund_amount'];

export function transactionData(row: TransactionRow): Record<string, unknown> {
  const base = {
    amount: amountOf(row),
    currency: row.currency,
    order_id: row.orderId,
    transaction_id: row.id,
    customer: row.customer,
  };
  const refund = { status: row.refunded, refund_date: iso(row.refundedAt) };
  const details = exactNumbers(row.details, DECIMAL_DETAIL_KEYS);
  switch (row.kind) {
    case 'card':
      return {
        ...base,
        refund,
        chargeback: { status: row.chargeback, chargeback_date: iso(row.chargebackAt) },
        descriptor: row.descriptor,
        is_card_WL: row.details.is_card_WL === true,
      };
    case 'payout':
      return { ...base, wallet_id: row.walletId };
    case 'crypto_payin':
      return { ...base, refund, ...details };
    case 'ramp':
      return { transaction_id: row.id, order_id: row.orderId, customer: row.customer, ...details };
  }
}

export function transactionBody(row: TransactionRow): TransactionBody {
  return {
    status: row.status,
    message: row.message,
    ...(row.redirectUrl && !['SUCCESS', 'FAILED', 'BLOCKED'].includes(row.status)
      ? { redirect_url: row.redirectUrl }
      : {}),
    data: transactionData(row),
  };
}
