import { sql, type SQL } from 'drizzle-orm';
import type { Finding } from './breaks';

/**
 * What one run of one leg reads: the window `[from, to)` (`to` is the run's cut-off), and the subjects of
 * the leg's unsettled breaks, which it examines again whatever the window so a break put right is resolved.
 */
export interface Scope {
  from: Date;
  to: Date;
  /** Transactions named by this source's unsettled breaks. */
  transactionIds: string[];
  /** References of this source's unsettled breaks (ledger entries, processor records). */
  references: string[];
  /** The chain legs': each watched node's blocks to read, by node id. */
  blocks?: Record<string, BlockRange>;
}

/** Blocks of one chain node, both ends included, as decimal text. */
export interface BlockRange {
  from: string;
  to: string;
}

/**
 * One reconciliation leg: the ledger against one source of truth outside it (or itself). A new acquirer or
 * chain family adds a leg (docs/reconciliation.md). `check` answers every difference it finds in the scope;
 * it reads in pages or set-based queries so a day of transactions fits in bounded memory, and never writes.
 */
export interface ReconciliationLeg {
  /** The source its breaks are recorded under: `ledger`, `sandbox`, `stripe`, or a chain network. */
  readonly source: string;
  check(scope: Scope): Promise<Finding[]>;
}

/** Transactions of these kinds wait no longer than this before a run calls them stale. */
const STALE_AFTER_MS: Record<string, number> = {
  card: 60 * 60_000,
  apm: 2 * 60 * 60_000,
  payout: 24 * 60 * 60_000,
  crypto_payin: 3 * 60 * 60_000,
  ramp: 3 * 60 * 60_000,
};

/** Whether a transaction of `kind` created at `createdAt` has waited past its deadline by `cutOff`. */
export const isStale = (kind: string, createdAt: Date, cutOff: Date): boolean =>
  cutOff.getTime() - createdAt.getTime() > (STALE_AFTER_MS[kind] ?? STALE_AFTER_MS.card!);

/** A list of texts as one Postgres array parameter (`= any(...)`), empty or not. */
export const textArray = (values: string[]): SQL => sql`${sql.param(values)}::text[]`;
