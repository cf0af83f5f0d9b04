/**
 * The words every layer shares, defined once: the types and the database enums derive from these lists.
 */

/** Test and live data never mix; every key, wallet, terminal and transaction belongs to one mode. */
export const MODES = ['test', 'live'] as const;
export type Mode = (typeof MODES)[number];

export function isMode(value: unknown): value is Mode {
  return (MODES as readonly unknown[]).includes(value);
}

export const TRANSACTION_KINDS = ['card', 'payout', 'ramp', 'crypto_payin', 'apm'] as const;
export type TransactionKind = (typeof TRANSACTION_KINDS)[number];

export function isTransactionKind(value: unknown): value is TransactionKind {
  return (TRANSACTION_KINDS as readonly unknown[]).includes(value);
}

/**
 * Alternative payment methods the hosted APM page offers (docs/hosted.md), each served by connectors that
 * say they take it (`APM_CONNECTOR_METHODS`).
 */
export const APM_METHODS = ['bank_redirect', 'wallet'] as const;
export type ApmMethod = (typeof APM_METHODS)[number];

export function isApmMethod(value: unknown): value is ApmMethod {
  return (APM_METHODS as readonly unknown[]).includes(value);
}

/** Which method each APM connector takes; the workflow routes a chosen method to these terminals only. */
export const APM_CONNECTOR_METHODS: Readonly<Record<string, readonly ApmMethod[]>> = {
  'sandbox-bank': ['bank_redirect'],
  'sandbox-wallet': ['wallet'],
};

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
