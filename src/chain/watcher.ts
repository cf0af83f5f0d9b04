import { randomBytes } from 'node:crypto';
import { and, asc, eq, gte, inArray, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { Client } from '@temporalio/client';
import type { Db } from '../db/client';
import { chainNodes, chainTransfers, depositAddresses } from '../db/schema/index';
import type { Logger } from '../platform/log';
import type { WorkerMetrics } from '../platform/metrics';
import { findCryptoAsset } from '../coins/catalogue';
import { findTransaction } from '../transactions/lookup';
import { assetOf, handOverDeposit, holdDeposit } from '../transactions/deposits';
import type { DepositDisposition } from '../contracts';
import { canonicalDecimal, formatUnits, parseUnits } from '../lib/units';
import { watchedChainNodeIds, chainNodeById, type ChainNode } from './nodes';
import { isDepositOnlyNetwork } from '../coins/networks';
import type { ChainReader, Seen } from './family';
import { readerOf } from './families';

/** How far back the watcher reads again when the chain lost the block it read last. */
const REWIND_BLOCKS = 128n;
/** Addresses one lookup of deposit addresses takes at most. */
const ADDRESS_CHUNK = 5_000;
/**
 * How long a worker's claim on a node's watching lasts without renewal (each poll renews it). A worker
 * that dies without letting go holds a node this long at most.
 */
const LEASE_SECONDS = 10;

/**
 * How often a node whose family reads by address (Solana) has the addresses of its closed transactions
 * read, for late deposits: a scan every `pollMs` reads only the open ones, so its cost follows the
 * payments under way rather than every address of the last week.
 */
export const CLOSED_ADDRESSES_EVERY_MS = 60_000;

export interface WatcherOptions {
  db: Db;
  temporal: Client;
  masterKey: string;
  log: Logger;
  pollMs: number;
  /** How often closed transactions' addresses are read where a family reads by address (60 s). */
  closedEveryMs?: number;
  /** Where each node's pass is timed (docs/operations.md, metrics). */
  metrics?: Pick<WorkerMetrics, 'chainScanSeconds'>;
}

/** Deposits one tick hands over at most per node; the rest wait for the next tick. */
const HAND_OVER_BATCH = 200;
/**
 * Nodes passed over at once by one watcher: a node timing out holds the others back only when this many
 * stall together (one provider behind four nodes or more), and the watcher takes a handful of the worker's
 * database connections at most, not its whole pool.
 */
const PASSES_AT_ONCE = 4;

/** A counting semaphore whose waiters are served in turn. */
function slotsOf(count: number): { take(): Promise<void>; give(): void } {
  let free = count;
  const waiting: (() => void)[] = [];
  return {
    async take() {
      if (free > 0) free -= 1;
      else await new Promise<void>((resolve) => waiting.push(resolve));
    },
    give() {
      const next = waiting.shift();
      if (next) next();
      else free += 1;
    },
  };
}

/**
 * Watches every registered node, through its family's reader (families.ts), for transfers into deposit
 * addresses and hands each one, once it has the node's number of confirmations, to its
 * transaction's workflow: the same settlement path the sandbox chain's deposits take. Only blocks that
 * deep are ever read, so a reorg shallower than the confirmation depth never reaches the service. Any
 * number of worker processes may run this: a lease in `chain_nodes` gives each node one watcher at a
 * time, and a deposit handed over twice is accounted once (keyed by its transaction hash).
 */
export function startChainWatcher(options: WatcherOptions): { stop(): Promise<void> } {
  const owner = `${process.pid}-${randomBytes(4).toString('hex')}`;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let listing: Promise<void> = Promise.resolve();
  /** Each node's pass under way or waiting for a slot: one at a time per node. */
  const passes = new Map<string, Promise<void>>();
  /** When this process last read each node's closed addresses (a process that just took a node reads them). */
  const closedReadAt = new Map<string, number>();
  const closedEveryMs = options.closedEveryMs ?? CLOSED_ADDRESSES_EVERY_MS;
  const slots = slotsOf(PASSES_AT_ONCE);

  const pass = async (id: string) => {
    await slots.take();
    try {
      if (stopped || !(await takeLease(options.db, id, owner))) return;
      // Read under the lease: the cursor as the last watcher of this node left it.
      const node = await chainNodeById(options.db, options.masterKey, id);
      if (!node) return;
      const timing = options.metrics?.chainScanSeconds.startTimer({ network: node.network, mode: node.mode });
      try {
        try {
          const startedAt = Date.now();
          const closed = startedAt - (closedReadAt.get(id) ?? -Infinity) >= closedEveryMs;
          await scanNode(options, node, { closed });
          if (closed) closedReadAt.set(id, startedAt);
        } catch (error) {
          options.log.warn(
            { err: error, chainNode: node.id, network: node.network },
            'chain scan failed; retrying',
          );
          // Not watched while the node cannot be read (`/readyz` says so); any worker may try next tick.
          await options.db
            .update(chainNodes)
            .set({ leaseUntil: sql`now()` })
            .where(and(eq(chainNodes.id, id), eq(chainNodes.leaseOwner, owner)));
        }
        // Apart from the scan: deposits found earlier are handed over even while the node is unreachable.
        await handOverDeposits(options, node);
      } finally {
        timing?.();
      }
    } finally {
      slots.give();
    }
  };
  // Every tick starts a pass over each node not already being passed over: a slow or unreachable node
  // delays its own deposits, not another chain's.
  const tick = async () => {
    for (const id of await watchedChainNodeIds(options.db)) {
      if (stopped) return;
      if (passes.has(id)) continue;
      passes.set(
        id,
        pass(id)
          .catch((error: unknown) =>
            options.log.warn({ err: error, chainNode: id }, 'chain watcher pass failed; retrying'),
          )
          .finally(() => passes.delete(id)),
      );
    }
  };
  const loop = () => {
    if (stopped) return;
    listing = tick()
      .catch((error: unknown) => options.log.warn({ err: error }, 'chain watcher tick failed; retrying'))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, options.pollMs);
      });
  };
  loop();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await listing;
      await Promise.all(passes.values());
      // Best effort: when Postgres is going down with us, the lease simply runs out.
      await options.db
        .update(chainNodes)
        .set({ leaseOwner: null, leaseUntil: null })
        .where(eq(chainNodes.leaseOwner, owner))
        .catch(() => undefined);
    },
  };
}

async function takeLease(db: Db, nodeId: string, owner: string): Promise<boolean> {
  const taken = await db
    .update(chainNodes)
    .set({ leaseOwner: owner, leaseUntil: sql`now() + make_interval(secs => ${LEASE_SECONDS})` })
    .where(
      and(
        eq(chainNodes.id, nodeId),
        isNull(chainNodes.retiredAt),
        or(
          eq(chainNodes.leaseOwner, owner),
          isNull(chainNodes.leaseUntil),
          lt(chainNodes.leaseUntil, sql`now()`),
        ),
      ),
    )
    .returning({ id: chainNodes.id });
  return taken.length > 0;
}

/**
 * Reads the next confirmed blocks of one node, hands over what they paid in, then moves the cursor. On a
 * family that reads by address, the scan reads the addresses of open transactions, and with `closed` those
 * of closed ones too, on their own cursor (`late_scanned_block`) from where they were last read up to the
 * main one.
 */
export async function scanNode(
  options: Pick<WatcherOptions, 'db' | 'temporal' | 'log'>,
  node: ChainNode,
  { closed = true }: { closed?: boolean } = {},
) {
  const reader = readerOf(node, options.db);
  const head = await reader.head();
  const confirmedTip = head - BigInt(node.confirmations - 1);

  if (node.scannedBlock !== null && node.scannedHash) {
    const accounted = node.scannedBlock > head ? undefined : await reader.hashAt(node.scannedBlock);
    if (accounted !== node.scannedHash) {
      // The chain no longer holds the last block read as it was read: a reorg deeper than the
      // confirmations, or a node restored from an older state (a local chain after a hard kill). Read
      // again from well before it: a deposit is accounted once by its hash, so nothing counts twice.
      const limit = node.scannedBlock < confirmedTip ? node.scannedBlock : confirmedTip;
      const back = limit > REWIND_BLOCKS ? limit - REWIND_BLOCKS : 0n;
      const restartHash = await reader.hashAt(back);
      options.log.error(
        {
          chainNode: node.id,
          network: node.network,
          block: node.scannedBlock.toString(),
          from: back.toString(),
        },
        `block ${node.scannedBlock} on ${node.network} is not the one the watcher read (a reorg deeper than ${node.confirmations} confirmations, or a node restored from an older state): reading again from block ${back}; deposits counted from the lost blocks stay counted, check them`,
      );
      await options.db
        .update(chainNodes)
        .set({
          scannedBlock: back,
          scannedHash: restartHash,
          // The closed addresses' cursor never stays past the main one.
          lateScannedBlock: sql`least(${chainNodes.lateScannedBlock}, ${back})`,
        })
        .where(eq(chainNodes.id, node.id));
      return;
    }
  }

  const scanned = node.scannedBlock ?? confirmedTip;
  const from = scanned + 1n;
  const to = confirmedTip < from + reader.batchBlocks - 1n ? confirmedTip : from + reader.batchBlocks - 1n;
  if (to >= from) {
    const seen = await reader.transfers(from, to, reader.byAddress ? 'open' : 'all');
    const deposits = await depositsAmong(options, node, reader, seen);
    const tipHash = await reader.hashAt(to);
    // The deposits found and the cursor past them are written together: none is lost, none read twice.
    await options.db.transaction(async (tx) => {
      if (deposits.length > 0) await tx.insert(chainTransfers).values(deposits).onConflictDoNothing();
      await tx
        .update(chainNodes)
        .set({
          scannedBlock: to,
          scannedHash: tipHash,
          // Until first set, the closed addresses were read with the open ones up to the main cursor: pinned
          // there (the row's old value) before an open-only read moves it, so none of its slots goes unread.
          ...(reader.byAddress
            ? { lateScannedBlock: sql`coalesce(${chainNodes.lateScannedBlock}, ${chainNodes.scannedBlock})` }
            : {}),
        })
        .where(
          and(
            eq(chainNodes.id, node.id),
            or(isNull(chainNodes.scannedBlock), lt(chainNodes.scannedBlock, to)),
          ),
        );
    });
  }
  if (reader.byAddress && closed && node.scannedBlock !== null) {
    await scanClosed(options, node, reader, to >= from ? to : scanned);
  }
}

/**
 * Reads the addresses of a node's closed transactions (kept for late deposits) from where they were last
 * read up to `upTo`, where the main cursor now is. A transaction closes with its address read up to the
 * main cursor, and this cursor is never past it, so the read starts no later than where the open read
 * stopped: no slot is left unread for any address; one read twice counts once (keyed by its hash).
 */
async function scanClosed(
  options: Pick<WatcherOptions, 'db' | 'temporal' | 'log'>,
  node: ChainNode,
  reader: ChainReader,
  upTo: bigint,
) {
  // Never read on their own yet: they were read with the open ones, up to the main cursor as this pass
  // found it (where the pass's own move of the main cursor pinned theirs).
  const from = (node.lateScannedBlock ?? node.scannedBlock!) + 1n;
  const to = upTo < from + reader.batchBlocks - 1n ? upTo : from + reader.batchBlocks - 1n;
  if (to < from) return;
  const deposits = await depositsAmong(options, node, reader, await reader.transfers(from, to, 'closed'));
  await options.db.transaction(async (tx) => {
    if (deposits.length > 0) await tx.insert(chainTransfers).values(deposits).onConflictDoNothing();
    await tx
      .update(chainNodes)
      .set({ lateScannedBlock: to })
      .where(
        and(
          eq(chainNodes.id, node.id),
          or(isNull(chainNodes.lateScannedBlock), lt(chainNodes.lateScannedBlock, to)),
          // Never past the main cursor: a pass that outlived its lease while another rewound it writes nothing.
          gte(chainNodes.scannedBlock, to),
        ),
      );
  });
}

/**
 * The transfers that pay deposit addresses of this node, one per (transaction, hash, asset) with the
 * amounts of one hash summed. A native transfer counts only if its transaction succeeded. Reconciliation
 * reads the chain again through it (src/chain/reconciliation.ts).
 */
export async function depositsAmong(
  options: Pick<WatcherOptions, 'db'>,
  node: ChainNode,
  reader: ChainReader,
  seen: Seen[],
): Promise<(typeof chainTransfers.$inferInsert)[]> {
  if (seen.length === 0) return [];
  const targets = [...new Set(seen.map((s) => s.to))];
  // In chunks: a Bitcoin block pays thousands of addresses, more than one statement takes.
  const owned: { address: string; transactionId: string }[] = [];
  for (let i = 0; i < targets.length; i += ADDRESS_CHUNK) {
    owned.push(
      ...(await options.db
        .select({ address: depositAddresses.address, transactionId: depositAddresses.transactionId })
        .from(depositAddresses)
        .where(
          and(
            eq(depositAddresses.chainNodeId, node.id),
            inArray(depositAddresses.address, targets.slice(i, i + ADDRESS_CHUNK)),
          ),
        )),
    );
  }
  const ownerOf = new Map(owned.map((row) => [row.address, row.transactionId]));
  const deposits = new Map<string, Seen & { transactionId: string }>();
  for (const transfer of seen) {
    const transactionId = ownerOf.get(transfer.to);
    if (!transactionId) continue;
    const settled = await reader.settle(transfer);
    if (!settled.stands) continue;
    if (settled.from !== undefined) transfer.from = settled.from;
    const key = `${transactionId}:${transfer.txHash}:${transfer.code}`;
    const known = deposits.get(key);
    deposits.set(
      key,
      known ? { ...known, units: known.units + transfer.units } : { ...transfer, transactionId },
    );
  }
  const found = [];
  for (const deposit of deposits.values()) {
    const asset = await findCryptoAsset(options.db, deposit.code, node.network);
    found.push({
      chainNodeId: node.id,
      transactionId: deposit.transactionId,
      txHash: deposit.txHash,
      asset: deposit.code,
      amount: formatUnits(deposit.units, asset?.decimals ?? 18),
      sender: deposit.from || null,
      block: deposit.block,
    });
  }
  return found;
}

/** How long a deposit whose hand-over failed waits before the next try: doubling, at most 5 minutes. */
export function handOverBackoffSeconds(attempts: number): number {
  return Math.min(2 ** attempts, 300);
}

/**
 * Hands the node's waiting deposits to their transactions' workflows, one by one: a deposit in an asset
 * its transaction does not take, or one its workflow refuses, is held for ops with the reason; one whose
 * hand-over fails is tried again later, on its own backoff, without keeping the others waiting.
 */
export async function handOverDeposits(
  options: Pick<WatcherOptions, 'db' | 'temporal' | 'log'>,
  node: Pick<ChainNode, 'id' | 'network'>,
): Promise<void> {
  const { db, log } = options;
  const waiting = await db
    .select()
    .from(chainTransfers)
    .where(
      and(
        eq(chainTransfers.chainNodeId, node.id),
        isNull(chainTransfers.handedOverAt),
        lte(chainTransfers.nextAttemptAt, sql`now()`),
      ),
    )
    .orderBy(asc(chainTransfers.id))
    .limit(HAND_OVER_BATCH);
  for (const deposit of waiting) {
    const fields = {
      transactionId: deposit.transactionId,
      txHash: deposit.txHash,
      network: node.network,
      code: deposit.asset,
      amount: deposit.amount,
    };
    try {
      const outcome = await handOver(options, deposit);
      await db
        .update(chainTransfers)
        .set({ handedOverAt: sql`now()`, lastError: null })
        .where(eq(chainTransfers.id, deposit.id));
      log.info({ ...fields, outcome }, 'deposit confirmed on chain');
    } catch (error) {
      const attempts = deposit.attempts + 1;
      await db
        .update(chainTransfers)
        .set({
          attempts,
          lastError: error instanceof Error ? error.message : String(error),
          nextAttemptAt: sql`now() + make_interval(secs => ${handOverBackoffSeconds(attempts)})`,
        })
        .where(eq(chainTransfers.id, deposit.id));
      log.warn({ ...fields, err: error, attempts }, 'deposit hand-over failed; trying again later');
    }
  }
}

async function handOver(
  options: Pick<WatcherOptions, 'db' | 'temporal'>,
  deposit: typeof chainTransfers.$inferSelect,
): Promise<DepositDisposition> {
  const { db, temporal } = options;
  const row = await findTransaction(db, deposit.transactionId);
  if (!row) throw new Error(`deposit address of ${deposit.transactionId} has no transaction`);
  const asset = assetOf(row);
  // Live on a network whose transactions the service does not sign (TRON), nothing can be refunded on
  // chain: without a sender to refund to, whatever is to be given back is held for ops, who
  // see the sender in chain_transfers (docs/connectors.md).
  const refundable = !(row.mode === 'live' && asset && isDepositOnlyNetwork(asset.network));
  const ref = {
    transactionId: row.id,
    txHash: deposit.txHash,
    amount: deposit.amount,
    ...(deposit.sender && refundable ? { sender: deposit.sender } : {}),
  };
  const found =
    asset?.code === deposit.asset ? await findCryptoAsset(db, asset.code, asset.network) : undefined;
  const units = found ? parseUnits(canonicalDecimal(deposit.amount) ?? '', found.decimals) : undefined;
  if (!asset || asset.code !== deposit.asset || units === undefined) {
    const reason = !asset
      ? 'This transaction does not take deposits.'
      : `Paid in ${deposit.asset}, which this transaction does not take.`;
    return (await holdDeposit(db, { ...ref, reason })) ? 'held' : 'duplicate';
  }
  return handOverDeposit(db, temporal, row, { ...ref, units });
}
