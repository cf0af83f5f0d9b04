import { sql } from 'drizzle-orm';
import type { Address, Signature } from '@solana/kit';
import type { Db } from '../../db/client';
import type { ChainNode } from '../nodes';
import type { ChainReader, DepositAddresses, Seen } from '../family';
import { solanaRpc } from './rpc';
import { associatedTokenAccount, slotMark } from './accounts';

/**
 * How long after its transaction closed a deposit address is still read: a late deposit is refunded or
 * held like any other, but every address read costs part of a call, so closed ones age out (and are read
 * once a minute, not every scan: src/chain/watcher.ts).
 */
export const LATE_DEPOSIT_DAYS = 7;
/** Signatures one `getSignaturesForAddress` page holds at most (the node's own limit). */
const PAGE = 1000;
/** Everything is read at `finalized`: a finalized slot is never rolled back. */
const commitment = 'finalized';

/** Accounts one `getMultipleAccounts` call reads at most (the node's own limit). */
const ACCOUNTS_PER_CALL = 100;
/** Where an SPL token account keeps its balance: a u64 after the mint and the owner. */
const AMOUNT_AT = { offset: 64, length: 8 };

/** A token account's balance, and the earliest bank slot this process has read it at. */
interface Balance {
  units: bigint;
  slot: bigint;
}

/**
 * Per node and cluster (its genesis hash: a local ledger started afresh is another), each deposit token
 * account's balance as this process last read it, with the first slot it read that balance at: kept while
 * the balance stays the same, so the fact ages as the cursor moves past it. A deposit account's balance
 * only grows unless the service sends from it, so "held u at slot s, and holds u now" proves nothing
 * arrived after s. Only such facts are kept: another process, a failed scan or a reconciliation read in
 * between can only make a later scan read more.
 */
const readBefore = new Map<string, Map<string, Balance>>();

/**
 * Reads a Solana node for the watcher through its JSON-RPC, by address rather than by block: a mainnet
 * block holds thousands of transactions, a deposit address a handful. The deposit addresses asked for are
 * read (open ones, those closed in the last LATE_DEPOSIT_DAYS, or both: the watcher reads closed ones on
 * their own slower cursor), but only those whose token balance moved are read signature by signature, so a
 * read's calls grow with the addresses paid, not with every address asked for:
 *
 * - one `getMultipleAccounts` per 100 addresses reads each associated token account's balance at the
 *   finalized bank;
 * - an account whose balance this process read, the same, at a bank before the slots asked took no deposit
 *   in them: a transfer in raises the balance, and only the service can take one out (the deposit key is
 *   ours). An account the service has sent from (a refund) is always read, so a refund and a deposit of the
 *   same amount cannot cancel out. An account that moved is read until the cursor has passed the bank that
 *   showed it (the slots asked end some confirmations before the bank);
 * - every other account: the signatures touching it in the slots asked (`getSignaturesForAddress`), and for
 *   each successful one the change in the owner's token balance (`getTransaction`'s pre- and post-token
 *   balances, exact integers). The sender is the owner whose balance of that mint fell.
 *
 * Slots stand for blocks.
 */
export function solanaReader(node: ChainNode, db: Db): ChainReader {
  const client = solanaRpc(node.rpcUrl);
  return {
    // Slots only bound which signatures count; the reads are per address.
    batchBlocks: 10_000n,
    byAddress: true,
    head: () => client.getSlot({ commitment }).send(),
    // Only finalized slots are read, and they are never rolled back: what the cursor check must catch is
    // another cluster answering at the node's URL (a local ledger started afresh), so the "hash" of a slot
    // is its cluster's genesis hash with the slot. Pruned and skipped slots then need no block.
    hashAt: (slot) => slotMark(node.rpcUrl, slot),
    async transfers(from, to, addresses = 'all') {
      const seen: Seen[] = [];
      // Open transactions' addresses are read whatever the slots' time: only the late window needs it.
      const slotsFrom = addresses === 'open' ? new Date() : await timeOf(node, from);
      const owners = await readOwners(db, node.id, slotsFrom, addresses);
      const accounts: { owner: string; code: string; mint: string; account: Address }[] = [];
      for (const [code, mint] of Object.entries(node.tokens)) {
        for (const owner of owners) {
          accounts.push({ owner, code, mint, account: await associatedTokenAccount(owner, mint) });
        }
      }
      // The cluster before its balances: a ledger started afresh meanwhile only files them under a dead key.
      // Kept per set of addresses read: a read of one set must not forget what a read of another knows.
      const memory = `${node.id}:${await client.getGenesisHash().send()}:${addresses}`;
      const balances = await balancesOf(
        node,
        accounts.map((a) => a.account),
        to,
      );
      // Read after the balances: a refund that is in them was recorded before it was broadcast.
      const spent = await spentFrom(db, node.id, owners);
      const before = readBefore.get(memory);
      const after = new Map<string, Balance>();
      for (const [i, { owner, code, mint, account }] of accounts.entries()) {
        const known = before?.get(account);
        const now = balances[i]!;
        const unchanged = known !== undefined && known.units === now.units;
        after.set(account, unchanged ? known : now);
        if (unchanged && known.slot < from && !spent.has(owner)) continue;
        for (const signature of await signaturesIn(node, account, from, to)) {
          const found = await tokenTransfer(node, signature, owner, mint);
          if (found) seen.push({ ...found, code, to: owner });
        }
      }
      readBefore.set(memory, after);
      return seen;
    },
    // Only successful transactions are read, and their sender comes with them.
    settle: async () => ({ stands: true }),
    async locate(txHash) {
      // A node shows no pool: a transaction it knows of that is not finalized yet still waits.
      const { value } = await client
        .getSignatureStatuses([txHash as Signature], { searchTransactionHistory: true })
        .send();
      const status = value[0];
      if (!status) return 'absent';
      if (status.confirmationStatus !== commitment) return 'pool';
      return { block: status.slot, succeeded: status.err === null };
    },
  };
}

/**
 * The deposit owners of a node whose transaction is open, or closed less than LATE_DEPOSIT_DAYS before
 * `slotsFrom` (the time of the first slot being read, not of the read, so a watcher stopped for longer
 * than the window still reads the late deposits made while it was stopped); or only one of the two sets.
 */
async function readOwners(
  db: Db,
  nodeId: string,
  slotsFrom: Date,
  addresses: DepositAddresses,
): Promise<string[]> {
  const open = sql`t.status not in ('SUCCESS', 'FAILED', 'BLOCKED')`;
  const late = sql`t.updated_at > ${slotsFrom}::timestamptz - make_interval(days => ${LATE_DEPOSIT_DAYS})`;
  const which =
    addresses === 'open'
      ? open
      : addresses === 'closed'
        ? sql`not (${open}) and ${late}`
        : sql`(${open} or ${late})`;
  const rows = await db.execute<{ address: string }>(sql`
    select a.address from deposit_addresses a join transactions t on t.id = a.transaction_id
    where a.chain_node_id = ${nodeId} and ${which}
    order by a.hd_index`);
  return rows.rows.map((row) => row.address);
}

/**
 * When the first block at or after `slot` was made (slots may be skipped); now when the node has no such
 * block yet or no time for it.
 */
async function timeOf(node: ChainNode, slot: bigint): Promise<Date> {
  const client = solanaRpc(node.rpcUrl);
  const [made] = await client.getBlocksWithLimit(slot, 1, { commitment }).send();
  const seconds = made === undefined ? null : await client.getBlockTime(made).send();
  return seconds === null ? new Date() : new Date(Number(seconds) * 1000);
}

/**
 * Each account's token balance (0 when it is not open yet) and the slot of the finalized bank that
 * answered, from a node that has reached `to`.
 */
async function balancesOf(node: ChainNode, accounts: Address[], to: bigint): Promise<Balance[]> {
  const client = solanaRpc(node.rpcUrl);
  const balances: Balance[] = [];
  for (let i = 0; i < accounts.length; i += ACCOUNTS_PER_CALL) {
    const { context, value } = await client
      .getMultipleAccounts(accounts.slice(i, i + ACCOUNTS_PER_CALL), {
        commitment,
        encoding: 'base64',
        dataSlice: AMOUNT_AT,
        minContextSlot: to,
      })
      .send();
    for (const account of value) {
      const units = account ? Buffer.from(account.data[0], 'base64').readBigUInt64LE() : 0n;
      balances.push({ units, slot: context.slot });
    }
  }
  return balances;
}

/** The owners among `owners` the service has signed a send from on this node (a refund of a deposit). */
async function spentFrom(db: Db, nodeId: string, owners: string[]): Promise<Set<string>> {
  if (owners.length === 0) return new Set();
  const rows = await db.execute<{ address: string }>(sql`
    select distinct from_address as address from chain_sends
    where chain_node_id = ${nodeId} and from_address = any(${sql.param(owners)}::text[])`);
  return new Set(rows.rows.map((row) => row.address));
}

/** The successful transactions touching `account` in slots `from` to `to`, newest first. */
async function signaturesIn(node: ChainNode, account: Address, from: bigint, to: bigint) {
  const client = solanaRpc(node.rpcUrl);
  const found: Signature[] = [];
  let before: Signature | undefined;
  for (;;) {
    const page = await client
      // Answered from a node that has reached `to`: one behind the node asked for the head (a load-balanced
      // URL) would leave out signatures the cursor then passes for good.
      .getSignaturesForAddress(account, {
        commitment,
        limit: PAGE,
        minContextSlot: to,
        ...(before ? { before } : {}),
      })
      .send();
    for (const entry of page) {
      if (entry.slot < from) return found;
      if (entry.slot <= to && entry.err === null) found.push(entry.signature);
    }
    // A page may come back short before the end: only an empty one is the end.
    if (page.length === 0) return found;
    before = page[page.length - 1]!.signature;
  }
}

/** What one transaction paid `owner` in `mint`, and who paid it; undefined when it paid nothing. */
async function tokenTransfer(node: ChainNode, signature: Signature, owner: string, mint: string) {
  const tx = await solanaRpc(node.rpcUrl)
    .getTransaction(signature, { commitment, encoding: 'json', maxSupportedTransactionVersion: 0 })
    .send();
  // A node that listed the signature but cannot give the transaction yet (another backend behind the URL):
  // the scan fails and is tried again, its cursor unmoved.
  if (!tx) throw new Error(`node ${node.id} listed ${signature} but has no transaction for it yet`);
  if (!tx.meta || tx.meta.err !== null) return undefined;
  // Per token account of this mint: its owner and how much it gained or lost.
  const change = new Map<number, { owner: string; units: bigint }>();
  const add = (entries: typeof tx.meta.preTokenBalances, sign: bigint) => {
    for (const entry of entries ?? []) {
      if (entry.mint !== mint || !entry.owner) continue;
      const known = change.get(entry.accountIndex) ?? { owner: entry.owner, units: 0n };
      known.units += sign * BigInt(entry.uiTokenAmount.amount);
      change.set(entry.accountIndex, known);
    }
  };
  add(tx.meta.preTokenBalances, -1n);
  add(tx.meta.postTokenBalances, 1n);
  let units = 0n;
  let sender: { owner: string; units: bigint } | undefined;
  for (const account of change.values()) {
    if (account.owner === owner) units += account.units;
    else if (account.units < 0n && (!sender || account.units < sender.units)) sender = account;
  }
  if (units <= 0n) return undefined;
  return { txHash: signature as string, block: tx.slot, from: sender?.owner ?? '', units };
}
