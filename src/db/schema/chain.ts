import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  numeric,
  pgSequence,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { MODES } from '../../lib/vocabulary';

/**
 * A node watched for one network in one mode (see docs/connectors.md): an EVM or TRON JSON-RPC node, a
 * Bitcoin node or a Solana node. Deposit addresses and the
 * treasury that sends and refunds derive from `seed_enc`, an HD seed encrypted with the master key. The
 * watcher's progress (`scanned_*`) and its lease live here, so any worker process can take over.
 */
export const chainNodes = pgTable(
  'chain_nodes',
  {
    id: text('id').primaryKey(),
    mode: text('mode', { enum: MODES }).notNull(),
    network: text('network').notNull(),
    rpcUrl: text('rpc_url').notNull(),
    /** Blocks a transfer must be buried under, its own included, before it counts. */
    confirmations: integer('confirmations').notNull(),
    /**
     * Which of the network's chains the node serves, where addresses differ between them: on BITCOIN
     * `main`, `test` or `regtest` (their `bc1`, `tb1`, `bcrt1` addresses), read from the node when it was
     * registered; on SOLANA the cluster its genesis hash names (`mainnet-beta`, `devnet`, `testnet`, `local`).
     * Null on the EVM networks and TRON.
     */
    chainName: text('chain_name'),
    /** Asset code to token contract (ERC-20, TRC-20) or SPL mint address; the native coin needs no entry. */
    tokens: jsonb('tokens').$type<Record<string, string>>().notNull(),
    seedEnc: text('seed_enc').notNull(),
    /** Test mode only: a funded key the test deposit helper sends real transfers from. */
    faucetKeyEnc: text('faucet_key_enc'),
    /** The last block the watcher accounted, and its hash (a deeper reorg than `confirmations` shows). */
    scannedBlock: bigint('scanned_block', { mode: 'bigint' }),
    scannedHash: text('scanned_hash'),
    /**
     * Where a family that reads by address (Solana) has read the addresses of closed transactions to, on
     * their own slower cadence (src/chain/watcher.ts); never past `scanned_block`. Null until first read:
     * they were read with the open ones up to `scanned_block`.
     */
    lateScannedBlock: bigint('late_scanned_block', { mode: 'bigint' }),
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    /** New deposit addresses come from the active node of a network and mode; a replaced one is kept. */
    active: boolean('active').notNull().default(true),
    /**
     * When the node stopped being watched at all. A replaced node is still watched (its open transactions'
     * addresses may still be paid) until retired; a dev chain that is not running is retired at once.
     */
    retiredAt: timestamp('retired_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('chain_nodes_active_idx')
      .on(t.mode, t.network)
      .where(sql`${t.active}`),
  ],
);

/** HD indexes for deposit addresses: one sequence for every node, so an index is never handed out twice. */
export const depositAddressIndex = pgSequence('deposit_address_index', { startWith: 0, minValue: 0 });

/** A deposit address, derived at `hd_index` of its node's seed, for exactly one transaction. */
export const depositAddresses = pgTable(
  'deposit_addresses',
  {
    /** Lower-case hex (EVM, TRON), so lookups from logs need no checksum casing; as shown elsewhere. */
    address: text('address').primaryKey(),
    chainNodeId: text('chain_node_id').notNull(),
    hdIndex: bigint('hd_index', { mode: 'number' }).notNull(),
    transactionId: text('transaction_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('deposit_addresses_transaction_idx').on(t.transactionId, t.chainNodeId),
    uniqueIndex('deposit_addresses_index_idx').on(t.chainNodeId, t.hdIndex),
  ],
);

/**
 * Every transfer we sign (treasury sends and refunds, test faucet deposits), under the idempotency key of
 * the step that asked for it. The signed transaction is stored before it is broadcast, so a retry
 * broadcasts the same one (same nonce, same hash) and a transfer is sent at most once. An attempt the node
 * refused outright (`rejected`: it never entered the node's pool) or that reverted moved nothing; the next
 * attempt replaces it, and a rejected attempt's nonce is used again so no gap blocks later transfers.
 */
export const chainSends = pgTable(
  'chain_sends',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    idempotencyKey: text('idempotency_key').notNull(),
    chainNodeId: text('chain_node_id').notNull(),
    attempt: integer('attempt').notNull(),
    fromAddress: text('from_address').notNull(),
    nonce: bigint('nonce', { mode: 'number' }).notNull(),
    rawTransaction: text('raw_transaction').notNull(),
    txHash: text('tx_hash').notNull(),
    /**
     * `pending` until its receipt is seen (`mined`, `reverted`), or `rejected` by the node on broadcast.
     * A Bitcoin send is `broadcast` once a node took it: never `rejected` after that, whatever a later
     * broadcast answers.
     */
    state: text('state', { enum: ['pending', 'broadcast', 'mined', 'reverted', 'rejected'] })
      .notNull()
      .default('pending'),
    /**
     * A Solana send's lifetime: the slot its blockhash was read at, and the last block height that can
     * include it. Past that height (as a node that has reached the slot sees it) it can never land.
     */
    contextSlot: bigint('context_slot', { mode: 'bigint' }),
    validUntilHeight: bigint('valid_until_height', { mode: 'bigint' }),
    /**
     * A Bitcoin send's network fee, in satoshis: what left its address beyond the outputs. It includes change
     * below the dust limit, which no output can carry (docs/connectors.md, Bitcoin refunds).
     */
    feeUnits: bigint('fee_units', { mode: 'bigint' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('chain_sends_attempt_idx').on(t.idempotencyKey, t.attempt),
    uniqueIndex('chain_sends_nonce_idx')
      .on(t.chainNodeId, t.fromAddress, t.nonce)
      .where(sql`${t.state} <> 'rejected'`),
  ],
);

/**
 * Transfers into deposit addresses that the chain watcher read from confirmed blocks, each waiting to be
 * handed to its transaction's workflow. A scan records them and moves the node's cursor in one database
 * transaction; the hand-over then goes deposit by deposit, so one that fails (Temporal away, a workflow that
 * refuses it) never holds the cursor or another customer's deposit back. A refused one is held for ops in
 * `crypto_deposits` with the reason, like every deposit, and marked handed over.
 */
export const chainTransfers = pgTable(
  'chain_transfers',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    chainNodeId: text('chain_node_id').notNull(),
    transactionId: text('transaction_id').notNull(),
    txHash: text('tx_hash').notNull(),
    /** The asset's catalogue code. */
    asset: text('asset').notNull(),
    /** Units of the asset, exact. */
    amount: numeric('amount', { precision: 38, scale: 18 }).notNull(),
    sender: text('sender'),
    block: bigint('block', { mode: 'bigint' }).notNull(),
    handedOverAt: timestamp('handed_over_at', { withTimezone: true }),
    /** Failed hand-overs so far, the last one's error, and when to try again (a growing backoff). */
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('chain_transfers_transfer_idx').on(t.transactionId, t.txHash, t.asset),
    index('chain_transfers_waiting_idx')
      .on(t.chainNodeId, t.nextAttemptAt)
      .where(sql`${t.handedOverAt} is null`),
  ],
);
