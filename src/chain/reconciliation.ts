import { sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import type { Finding } from '../reconciliation/breaks';
import type { BlockRange, ReconciliationLeg, Scope } from '../reconciliation/leg';
import { textArray } from '../reconciliation/leg';
import { canonicalDecimal, formatUnits, parseUnits } from '../lib/units';
import { findCryptoAsset } from '../coins/catalogue';
import { chainNodeById, watchedChainNodeIds, type ChainNode } from './nodes';
import { readerOf } from './families';
import type { Located } from './family';
import { depositsAmong } from './watcher';

/**
 * Blocks of one node a reconciliation run reads at most (about a day and a half of Ethereum, two months of
 * Bitcoin, an hour of Solana's slots): a backlog, such as a node's first run or a schedule paused for days,
 * is read over several runs, each within its step's time.
 */
export const CHAIN_BLOCKS_PER_RUN = 10_000n;

/**
 * How long a send the service signed may wait to land before a run reports it: in a node's pool past this it
 * is stale, and unknown to the node it was dropped. Well past any fee market's usual wait, so a run never
 * reports a send that is merely slow.
 */
export const SEND_LANDS_WITHIN_MS = 30 * 60_000;

/** Balances one read asks a node for at most (the family's reader batches them as it can). */
const BALANCES_PER_READ = 1_000;

/** The sends that move a transaction's money (`chain_sends` keys): refunds and on-ramp sends. */
const MONEY_SEND = /^(refund|payment-refund|send):([^:]+)/;

/**
 * Each watched node's cut-off for a run being planned: the last block its watcher has read for every
 * deposit address (on Solana, closed transactions' addresses trail on their own cursor: the lower of the
 * two). A run reads a node's blocks from the previous run's cut-off to its own (src/reconciliation/runs.ts).
 */
export async function chainCutOffs(db: Db): Promise<Record<string, string>> {
  const ids = await watchedChainNodeIds(db);
  if (ids.length === 0) return {};
  const { rows } = await db.execute<{ id: string; scanned_block: string | null }>(
    sql`select id, least(scanned_block, coalesce(late_scanned_block, scanned_block))::text as scanned_block
        from chain_nodes where id = any(${textArray(ids)})`,
  );
  return Object.fromEntries(rows.flatMap((r) => (r.scanned_block === null ? [] : [[r.id, r.scanned_block]])));
}

/** The first block a node's first run reads: the lowest holding a deposit we recorded, else its cut-off. */
export async function firstBlockOf(db: Db, nodeId: string, cutOff: string): Promise<string> {
  const { rows } = await db.execute<{ first: string | null }>(
    sql`select min(block)::text as first from chain_transfers where chain_node_id = ${nodeId}`,
  );
  const first = rows[0]?.first;
  return first !== null && first !== undefined && BigInt(first) <= BigInt(cutOff) ? first : cutOff;
}

interface Transfer {
  transactionId: string;
  txHash: string;
  asset: string;
  /** Exact decimal. */
  amount: string;
  block: bigint;
}

const keyOf = (t: Pick<Transfer, 'transactionId' | 'txHash' | 'asset'>) =>
  `${t.transactionId}:${t.txHash}:${t.asset}`;
/** A break's reference names the node and the block, so a later run can read that block again. */
const referenceOf = (node: ChainNode, t: Pick<Transfer, 'block' | 'txHash' | 'asset'>) =>
  `${node.id}:${t.block}:${t.txHash}:${t.asset}`;
const sameAmount = (a: string, b: string) => canonicalDecimal(a) === canonicalDecimal(b);

/**
 * The ledger against each chain the service watches (docs/reconciliation.md), on every family through its
 * reader: the blocks of the run's range are read again from the node, and every transfer into one of our
 * deposit addresses there must be a deposit the watcher recorded, for the same amount (else a missed
 * deposit), and every one recorded there must be on the chain (else it is missing at the source); every
 * recorded deposit handed to its transaction is counted there for its amount, and every counted chain
 * deposit was seen on its chain. The blocks of unsettled breaks are read again, so a break outside the
 * range is settled by the chain too.
 */
export function chainLeg(db: Db, masterKey: string): ReconciliationLeg {
  return {
    source: 'chain',
    async check(scope) {
      const findings: Finding[] = [];
      const ranges = new Map<string, BlockRange[]>();
      for (const [nodeId, range] of Object.entries(scope.blocks ?? {}))
        ranges.set(nodeId, [...(ranges.get(nodeId) ?? []), range]);
      for (const reference of scope.references) {
        const [nodeId, block] = reference.split(':');
        if (!nodeId || !block || !/^\d+$/.test(block)) continue;
        const inRange = (ranges.get(nodeId) ?? []).some(
          (r) => BigInt(r.from) <= BigInt(block) && BigInt(block) <= BigInt(r.to),
        );
        if (!inRange) ranges.set(nodeId, [...(ranges.get(nodeId) ?? []), { from: block, to: block }]);
      }
      for (const [nodeId, nodeRanges] of ranges) {
        const node = await chainNodeById(db, masterKey, nodeId);
        if (!node) continue;
        for (const range of nodeRanges)
          findings.push(...(await blocksAgainstLedger(db, node, BigInt(range.from), BigInt(range.to))));
        const cutOff = scope.blocks?.[nodeId];
        if (cutOff) findings.push(...(await balancesAgainstLedger(db, node, cutOff, scope)));
      }
      findings.push(...(await countedAgainstSeen(db, scope)));
      findings.push(...(await sendsAgainstChain(db, masterKey, scope)));
      return findings;
    },
  };
}

/** One node's blocks `from` to `to` read again, against the deposits the watcher recorded from them. */
async function blocksAgainstLedger(db: Db, node: ChainNode, from: bigint, to: bigint): Promise<Finding[]> {
  const reader = readerOf(node, db);
  const findings: Finding[] = [];
  for (let start = from; start <= to; start += reader.batchBlocks) {
    const end = start + reader.batchBlocks - 1n < to ? start + reader.batchBlocks - 1n : to;
    const onChain = new Map<string, Transfer>();
    for (const d of await depositsAmong({ db }, node, reader, await reader.transfers(start, end))) {
      const t: Transfer = { ...d, amount: d.amount, block: BigInt(d.block) };
      onChain.set(keyOf(t), t);
    }
    const { rows } = await db.execute<{
      transaction_id: string;
      tx_hash: string;
      asset: string;
      amount: string;
      block: string;
    }>(sql`
      select transaction_id, tx_hash, asset, amount::text, block::text from chain_transfers
      where chain_node_id = ${node.id} and block between ${start.toString()} and ${end.toString()}`);
    const recorded = new Map(
      rows.map((r) => {
        const t: Transfer = {
          transactionId: r.transaction_id,
          txHash: r.tx_hash,
          asset: r.asset,
          amount: r.amount,
          block: BigInt(r.block),
        };
        return [keyOf(t), t];
      }),
    );
    for (const [key, seen] of onChain) {
      const ours = recorded.get(key);
      const about = { transactionId: seen.transactionId, reference: referenceOf(node, seen) };
      if (!ours)
        findings.push({
          ...about,
          kind: 'missing_in_ledger',
          expected: `${seen.amount} ${seen.asset}`,
          observed: 'none',
          message: `${node.network} block ${seen.block} pays ${seen.amount} ${seen.asset} to the deposit address of ${seen.transactionId} (${seen.txHash}), but the watcher recorded no such deposit: a missed deposit.`,
        });
      else if (!sameAmount(ours.amount, seen.amount))
        findings.push({
          ...about,
          kind: 'amount',
          expected: `${seen.amount} ${seen.asset}`,
          observed: `${ours.amount} ${ours.asset}`,
          message: `Deposit ${seen.txHash} to ${seen.transactionId} is ${seen.amount} ${seen.asset} on ${node.network}, but ${ours.amount} was recorded.`,
        });
    }
    for (const [key, ours] of recorded)
      if (!onChain.has(key))
        findings.push({
          transactionId: ours.transactionId,
          reference: referenceOf(node, ours),
          kind: 'missing_at_source',
          expected: 'none',
          observed: `${ours.amount} ${ours.asset}`,
          message: `The deposit ${ours.txHash} of ${ours.amount} ${ours.asset} to ${ours.transactionId} was recorded from ${node.network} block ${ours.block}, but that block no longer holds it (a reorg deeper than the confirmations, or a row not written by the watcher).`,
        });
  }
  return findings;
}

/**
 * Deposits handed to their transactions (or recorded for them) in the window: each chain transfer counted
 * once for its amount in `crypto_deposits`, and each deposit of a transaction paid through a node's address
 * seen on its chain by the watcher.
 */
async function countedAgainstSeen(db: Db, scope: Scope): Promise<Finding[]> {
  const inWindow = (column: string) =>
    sql`(${sql.raw(column)} >= ${scope.from} and ${sql.raw(column)} < ${scope.to})`;
  const { rows: uncounted } = await db.execute<{
    chain_node_id: string;
    transaction_id: string;
    tx_hash: string;
    asset: string;
    amount: string;
    block: string;
    counted: string | null;
  }>(sql`
    select t.chain_node_id, t.transaction_id, t.tx_hash, t.asset, t.amount::text, t.block::text,
      d.amount::text as counted
    from chain_transfers t
    left join crypto_deposits d on d.transaction_id = t.transaction_id and d.tx_hash = t.tx_hash
    where t.handed_over_at is not null
      and (${inWindow('t.handed_over_at')} or t.transaction_id = any(${textArray(scope.transactionIds)}))
      and (d.id is null or d.amount <> t.amount)`);
  const findings: Finding[] = uncounted.map((t) => ({
    transactionId: t.transaction_id,
    reference: `${t.chain_node_id}:${t.block}:${t.tx_hash}:${t.asset}`,
    kind: t.counted === null ? 'missing_in_ledger' : 'amount',
    expected: `${t.amount} ${t.asset}`,
    observed: t.counted === null ? 'none' : `${t.counted} ${t.asset}`,
    message:
      t.counted === null
        ? `The deposit ${t.tx_hash} of ${t.amount} ${t.asset} was handed to ${t.transaction_id}, which has no record of it.`
        : `The deposit ${t.tx_hash} of ${t.amount} ${t.asset} was counted for ${t.transaction_id} as ${t.counted}.`,
  }));
  const { rows: unseen } = await db.execute<{ transaction_id: string; tx_hash: string; amount: string }>(sql`
    select d.transaction_id, d.tx_hash, d.amount::text from crypto_deposits d
    where (${inWindow('d.created_at')} or d.transaction_id = any(${textArray(scope.transactionIds)}))
      and exists (select 1 from deposit_addresses a where a.transaction_id = d.transaction_id)
      and not exists (select 1 from chain_transfers t
        where t.transaction_id = d.transaction_id and t.tx_hash = d.tx_hash)`);
  for (const d of unseen)
    findings.push({
      transactionId: d.transaction_id,
      reference: `deposit:${d.transaction_id}:${d.tx_hash}`,
      kind: 'missing_at_source',
      expected: 'none',
      observed: d.amount,
      message: `${d.transaction_id} counts a deposit ${d.tx_hash} of ${d.amount} that no chain watcher saw on its chain.`,
    });
  return findings;
}

/**
 * Every send a transaction's money made (a deposit refunded, a paid payin given back, an on-ramp's crypto)
 * that was signed in the window, or named by an unsettled break, landed once on its node: exactly one of its
 * attempts is in a block and did what it says (`duplicate` for more). One that has not landed within
 * SEND_LANDS_WITHIN_MS of its last attempt is reported: `stale_pending` while the node still holds it in its
 * pool, `missing_at_source` once the node has no trace of it (dropped from the pool). A landed transaction
 * moved what the service signed: its hash is that of the bytes stored before they were broadcast.
 */
async function sendsAgainstChain(db: Db, masterKey: string, scope: Scope): Promise<Finding[]> {
  const keys = scope.references.filter((r) => r.startsWith('send:')).map((r) => r.slice('send:'.length));
  const { rows } = await db.execute<{
    idempotency_key: string;
    chain_node_id: string;
    attempt: number;
    tx_hash: string;
    created_at: Date | string;
  }>(sql`
    select s.idempotency_key, s.chain_node_id, s.attempt, s.tx_hash, s.created_at from chain_sends s
    where s.state <> 'rejected' and s.idempotency_key ~ '^(refund|payment-refund|send):'
      and s.idempotency_key in (select idempotency_key from chain_sends
        where (created_at >= ${scope.from} and created_at < ${scope.to})
          or idempotency_key = any(${textArray(keys)})
          or split_part(idempotency_key, ':', 2) = any(${textArray(scope.transactionIds)}))
    order by s.idempotency_key, s.attempt`);
  const byKey = new Map<string, typeof rows>();
  for (const row of rows) byKey.set(row.idempotency_key, [...(byKey.get(row.idempotency_key) ?? []), row]);
  const nodes = new Map<string, ChainNode | undefined>();
  const findings: Finding[] = [];
  for (const [key, attempts] of byKey) {
    const located: { txHash: string; where: Located }[] = [];
    for (const attempt of attempts) {
      if (!nodes.has(attempt.chain_node_id))
        nodes.set(attempt.chain_node_id, await chainNodeById(db, masterKey, attempt.chain_node_id));
      const node = nodes.get(attempt.chain_node_id);
      if (!node) continue;
      located.push({ txHash: attempt.tx_hash, where: await readerOf(node, db).locate(attempt.tx_hash) });
    }
    const landed = located.filter((l) => typeof l.where === 'object' && l.where.succeeded);
    const last = attempts[attempts.length - 1]!;
    const about = {
      transactionId: MONEY_SEND.exec(key)?.[2],
      reference: `send:${key}`,
      expected: 'landed once',
    };
    const what = `The ${key.split(':')[0]} ${key}`;
    if (landed.length > 1)
      findings.push({
        ...about,
        kind: 'duplicate',
        observed: `landed ${landed.length} times`,
        message: `${what} landed ${landed.length} times on its chain (${landed.map((l) => l.txHash).join(', ')}): it was sent more than once.`,
      });
    else if (
      landed.length === 0 &&
      scope.to.getTime() - new Date(last.created_at).getTime() > SEND_LANDS_WITHIN_MS
    ) {
      const waiting = located.filter((l) => l.where === 'pool');
      findings.push(
        waiting.length > 0
          ? {
              ...about,
              kind: 'stale_pending',
              observed: 'in the pool',
              message: `${what} (${waiting.map((l) => l.txHash).join(', ')}) still waits in its node's pool, ${Math.round(SEND_LANDS_WITHIN_MS / 60_000)} minutes after it was signed: its fee may be too low to be mined.`,
            }
          : {
              ...about,
              kind: 'missing_at_source',
              observed: 'none',
              message: `${what} (${located.map((l) => l.txHash).join(', ') || 'its node is gone'}) is recorded as sent, but its node has no trace of it: it never landed (dropped from the node's pool). Broadcast its stored bytes again (docs/reconciliation.md, chain breaks).`,
            },
      );
    }
  }
  return findings;
}

/**
 * Each deposit address of the node whose transaction was active in the window, is named by an unsettled
 * break, or was paid in the run's blocks holds, at the run's cut-off block, what the deposits recorded to it
 * up to that block add up to, in every asset the node watches (else `amount`): more is money that reached
 * the address without the watcher seeing it (a transfer made by a contract, say); less, money that left an
 * address only the service holds keys to. Only where the family's addresses never spend and its node
 * answers for a past block (EVM networks); elsewhere the block and send checks stand in.
 */
async function balancesAgainstLedger(
  db: Db,
  node: ChainNode,
  range: BlockRange,
  scope: Scope,
): Promise<Finding[]> {
  const reader = readerOf(node, db);
  if (!reader.balancesAt) return [];
  const at = BigInt(range.to);
  const { rows } = await db.execute<{
    address: string;
    transaction_id: string;
    asset: string | null;
    amount: string | null;
  }>(sql`
    select a.address, a.transaction_id, t.asset, sum(t.amount)::text as amount
    from deposit_addresses a
    left join chain_transfers t
      on t.chain_node_id = a.chain_node_id and t.transaction_id = a.transaction_id and t.block <= ${range.to}
    where a.chain_node_id = ${node.id}
      and (a.transaction_id = any(${textArray(scope.transactionIds)})
        or exists (select 1 from transactions x where x.id = a.transaction_id
          and x.updated_at >= ${scope.from} and x.created_at < ${scope.to})
        or exists (select 1 from chain_transfers p where p.chain_node_id = a.chain_node_id
          and p.transaction_id = a.transaction_id and p.block between ${range.from} and ${range.to}))
    group by a.address, a.transaction_id, t.asset
    order by a.address`);
  const recorded = new Map<string, { transactionId: string; sums: Map<string, string> }>();
  for (const row of rows) {
    const entry = recorded.get(row.address) ?? { transactionId: row.transaction_id, sums: new Map() };
    if (row.asset && row.amount) entry.sums.set(row.asset, row.amount);
    recorded.set(row.address, entry);
  }
  const codes = [...(node.nativeCoin ? [node.nativeCoin] : []), ...Object.keys(node.tokens)];
  const decimals = new Map<string, number>();
  for (const code of codes)
    decimals.set(code, (await findCryptoAsset(db, code, node.network))?.decimals ?? 18);
  const findings: Finding[] = [];
  const holdings = [...recorded.keys()].flatMap((address) => codes.map((code) => ({ address, code })));
  for (let start = 0; start < holdings.length; start += BALANCES_PER_READ) {
    const some = holdings.slice(start, start + BALANCES_PER_READ);
    const held = await reader.balancesAt(some, at);
    if (held.length !== some.length)
      throw new Error(`${node.network} node ${node.id} gave ${held.length} balances for ${some.length}`);
    some.forEach(({ address, code }, i) => {
      const { transactionId, sums } = recorded.get(address)!;
      const places = decimals.get(code)!;
      const expected = parseUnits(sums.get(code) ?? '0', places) ?? 0n;
      const has = held[i]!;
      if (has === expected) return;
      const [want, have] = [formatUnits(expected, places), formatUnits(has, places)];
      findings.push({
        transactionId,
        reference: `balance:${node.id}:${address}:${code}`,
        kind: 'amount',
        expected: `${want} ${code}`,
        observed: `${have} ${code}`,
        message: `The deposit address ${address} of ${transactionId} holds ${have} ${code} on ${node.network} at block ${at}, but the deposits recorded to it add up to ${want}: ${has > expected ? 'money reached it that the watcher did not record (a transfer made by a contract, say)' : 'money left an address only the service holds keys to'}.`,
      });
    });
  }
  return findings;
}
