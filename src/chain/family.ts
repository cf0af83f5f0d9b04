/**
 * What a family of chains gives the service (docs/architecture.md, chain families): a node's keys and
 * addresses, the reader the watcher scans its nodes with, the sender the chain connector signs refunds and
 * on-ramp sends with, and the checks of a node being registered. Each family lives in its own folder
 * (evm/, tron/, bitcoin/, solana/) and is registered once, in families.ts; src/coins/networks.ts says which
 * networks it serves.
 */
import type { Db } from '../db/client';
import type { Mode } from '../lib/vocabulary';
import type { ChainNode, ChainNodeSpec } from './nodes';

/** A transfer into a deposit address, from a confirmed block. */
export interface Seen {
  txHash: string;
  block: bigint;
  /** The sender; '' when the reader finds it only for the transfers that pay a deposit address. */
  from: string;
  to: string;
  /** The asset's catalogue code. */
  code: string;
  units: bigint;
}

/** Which deposit addresses a read covers: all, those whose transaction is open, or closed ones. */
export type DepositAddresses = 'all' | 'open' | 'closed';

/** How the watcher reads one family of chains (docs/connectors.md). */
export interface ChainReader {
  /** Blocks one scan reads at most, so a watcher far behind catches up in bounded steps. */
  batchBlocks: bigint;
  head(): Promise<bigint>;
  /** The hash of the block at `height`. */
  hashAt(height: bigint): Promise<string>;
  /**
   * Every transfer into a deposit address in blocks `from` to `to`, both included. A reader `byAddress`
   * also reads those of open transactions alone (`open`), or of closed ones alone (`closed`); others read
   * every address whatever is asked.
   */
  transfers(from: bigint, to: bigint, addresses?: DepositAddresses): Promise<Seen[]>;
  /**
   * Set where a scan costs a read per deposit address rather than per block (Solana): the watcher then
   * reads the addresses of closed transactions, kept for late deposits, on a slower cadence of their own.
   */
  byAddress?: true;
  /** Whether a transfer that pays a deposit address stands, and who sent it when `from` is ''. */
  settle(transfer: Seen): Promise<{ stands: boolean; from?: string }>;
  /** Where a transaction the service signed stands on the node, for reconciliation (docs/reconciliation.md). */
  locate(txHash: string): Promise<Located>;
  /**
   * What each address (as stored) holds of its asset `code` at block `block`, in its smallest units, in the
   * order asked (read together, as one asks many); absent on a family whose node cannot answer for a past
   * block, or whose deposit addresses spend (their balance is then not compared).
   */
  balancesAt?(holdings: { address: string; code: string }[], block: bigint): Promise<bigint[]>;
}

/**
 * A signed transaction as a node sees it: in a block (at `block`, and whether it did what it says: a
 * reverted EVM call or a failed Solana instruction moved nothing), still waiting to be included (`pool`),
 * or unknown to it (`absent`: never broadcast, or dropped from its pool).
 */
export type Located = { block: bigint; succeeded: boolean } | 'pool' | 'absent';

/** A send the service signs: a deposit given back, or an on-ramp's crypto. Keyed: a retry sends once. */
export interface ChainSend {
  idempotencyKey: string;
  transactionId: string;
  mode: Mode;
  network: string;
  address: string;
  /** Exact decimal text, in the asset's units. */
  amount: string;
  currency: string;
}

/** One family of chains, as the watcher, the node registry and the chain connector use it. */
export interface ChainFamily {
  /** The address deposit index `index` gives on the node, as stored (the form its reader reports). */
  depositAddress(node: ChainNode, index: number): string;
  /** The address ops fund for the node's sends, as shown; null where a send spends the deposit itself. */
  treasury(node: ChainNode): string | null;
  /** An address of the family as merchants and customers see it, from its stored form. */
  shownAddress(stored: string): string;
  /** An address of the family as given (its shown form), stored; undefined when it is not one. */
  storedAddress(given: string): string | undefined;
  /** The reader of one of the family's nodes. */
  reader(node: ChainNode, db: Db): ChainReader;
  /**
   * Sends on one of the family's nodes and answers the transaction's hash; or `sandbox` when the family
   * signs nothing of the kind there and test mode lets the sandbox chain stand in (live mode throws).
   */
  send(db: Db, node: ChainNode, request: ChainSend): Promise<string | 'sandbox'>;
  /**
   * Checks a node being registered for one of the family's networks (it answers, serves the chain its mode
   * needs, has what the catalogue offers there) and records it (`insertNode`), after the checks every
   * family shares (src/chain/registration.ts).
   */
  register(
    db: Db,
    masterKey: string,
    spec: ChainNodeSpec,
    keys: { seedHex: string; native: string },
  ): Promise<RegisteredNode>;
}

/** A node just registered: its id, the treasury ops fund (none on Bitcoin), and the block it watches from. */
export interface RegisteredNode {
  id: string;
  treasury: string | null;
  watchingFrom: bigint;
}
