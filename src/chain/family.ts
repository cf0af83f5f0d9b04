/**
 * What a family of chains gives the service (docs/architecture.md, chain families): today the reader the
 * watcher scans its nodes with. Each family lives in its own folder (evm/, bitcoin/, solana/) and is
 * registered once, in families.ts.
 */
import type { Db } from '../db/client';
import type { ChainNode } from './nodes';

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

/** How the watcher reads one family of chains (docs/connectors.md). */
export interface ChainReader {
  /** Blocks one scan reads at most, so a watcher far behind catches up in bounded steps. */
  batchBlocks: bigint;
  head(): Promise<bigint>;
  /** The hash of the block at `height`. */
  hashAt(height: bigint): Promise<string>;
  /** Every transfer in blocks `from` to `to`, both included. */
  transfers(from: bigint, to: bigint): Promise<Seen[]>;
  /** Whether a transfer that pays a deposit address stands, and who sent it when `from` is ''. */
  settle(transfer: Seen): Promise<{ stands: boolean; from?: string }>;
}

/** One family of chains, as the watcher uses it. */
export interface ChainFamily {
  /** The reader of one of the family's nodes. */
  reader(node: ChainNode, db: Db): ChainReader;
}
