/**
 * The words every layer shares, defined once: the types and the database enums derive from these lists.
 */

/** Test and live data never mix; every key, wallet, terminal and transaction belongs to one mode. */
export const MODES = ['test', 'live'] as const;
export type Mode = (typeof MODES)[number];

export function isMode(value: unknown): value is Mode {
  return (MODES as readonly unknown[]).includes(value);
}

export const TRANSACTION_KINDS = ['card', 'payout', 'ramp', 'crypto_payin'] as const;
export type TransactionKind = (typeof TRANSACTION_KINDS)[number];

export function isTransactionKind(value: unknown): value is TransactionKind {
  return (TRANSACTION_KINDS as readonly unknown[]).includes(value);
}

/** The steps of the wallet ledger: what each entry did to the balance (docs/api.md, wallet transactions). */
export const LEDGER_STEPS = ['credit', 'reserve', 'release', 'settle', 'refund', 'chargeback'] as const;
export type LedgerStep = (typeof LEDGER_STEPS)[number];

/** The public statuses; the last three are final and never change. */
export const TRANSACTION_STATUSES = ['PENDING', 'REDIRECT', 'SUCCESS', 'FAILED', 'BLOCKED'] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];
export const FINAL_STATUSES: readonly TransactionStatus[] = ['SUCCESS', 'FAILED', 'BLOCKED'];

export function isFinal(status: TransactionStatus): boolean {
  return FINAL_STATUSES.includes(status);
}
