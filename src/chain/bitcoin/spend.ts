import { and, eq, ne, sql } from 'drizzle-orm';
import { Transaction } from '@scure/btc-signer';
import type { Db } from '../../db/client';
import { chainSends, chainTransfers, depositAddresses } from '../../db/schema/index';
import { parseUnits, plainDecimal } from '../../lib/units';
import { JsonNumber } from '../../lib/json';
import type { ChainNode } from '../nodes';
import { parseTransaction, type BitcoinTx } from './block';
import { bitcoinRpc, BitcoinRpcError } from './rpc';
import { lastAttempt, nextSendNumber, TransferRejectedError } from '../sends';
import { bitcoinKeys } from './keys';

/** Outputs below this many satoshis are dust: nodes do not relay them. */
const DUST = 546n;
/** Satoshis per virtual byte when the node gives no estimate (btcd, regtest). */
const FALLBACK_RATE: Record<string, bigint> = { main: 20n, test: 2n, regtest: 2n };

/**
 * Sends `units` satoshis to `to` from the outputs that paid this transaction's deposit address, at most once
 * per `idempotencyKey`: the signed transaction is stored (`chain_sends`) before it is broadcast, and a retry
 * broadcasts the same bytes. Its inputs are fixed when it is signed, so no two transactions can both spend
 * them: a second attempt is signed only after the node refused the first outright. The network fee comes
 * out of the amount sent (the recipient pays it); change goes back to the deposit address. Answers the
 * transaction id once the node has taken it.
 */
export async function sendFromDeposits(
  db: Db,
  node: ChainNode,
  request: { idempotencyKey: string; transactionId: string; to: string; units: bigint },
): Promise<string> {
  const client = bitcoinRpc(node.rpcUrl);
  for (;;) {
    const last = await lastAttempt(db, request.idempotencyKey);
    if (last && last.state !== 'rejected') {
      await settleBroadcast(db, client, last);
      return last.txHash;
    }
    await signAttempt(db, node, request, (last?.attempt ?? 0) + 1);
  }
}

/**
 * Broadcasts a stored send and records what the node said: `broadcast` once taken (and from then on
 * whatever a later broadcast answers: it may be in a block, or on peers), `rejected` on a definite refusal
 * of a send never taken, which is thrown as `TransferRejectedError` for the caller's retry to sign anew.
 * Anything else is an unknown outcome, thrown for the retry to ask again.
 */
async function settleBroadcast(
  db: Pick<Db, 'update'> | Parameters<Parameters<Db['transaction']>[0]>[0],
  client: ReturnType<typeof bitcoinRpc>,
  row: typeof chainSends.$inferSelect,
): Promise<void> {
  const answer = await broadcast(client, row.rawTransaction, row.txHash).catch((error: unknown) => {
    if (row.state === 'broadcast') return { kind: 'taken' as const };
    throw error;
  });
  if (answer.kind === 'taken') {
    if (row.state !== 'broadcast') {
      await db.update(chainSends).set({ state: 'broadcast' }).where(eq(chainSends.id, row.id));
    }
    return;
  }
  if (row.state === 'broadcast') return;
  await db.update(chainSends).set({ state: 'rejected' }).where(eq(chainSends.id, row.id));
  throw new TransferRejectedError(answer.reason);
}

async function signAttempt(
  db: Db,
  node: ChainNode,
  request: { idempotencyKey: string; transactionId: string; to: string; units: bigint },
  attempt: number,
): Promise<void> {
  const keys = bitcoinKeys(node);
  const client = bitcoinRpc(node.rpcUrl);
  const toScript = keys.scriptOf(request.to);
  if (!toScript) throw new TransferRejectedError(`${request.to} is not an address of this Bitcoin chain`);
  const [owned] = await db
    .select()
    .from(depositAddresses)
    .where(
      and(
        eq(depositAddresses.transactionId, request.transactionId),
        eq(depositAddresses.chainNodeId, node.id),
      ),
    );
  if (!owned)
    throw new TransferRejectedError(`${request.transactionId} has no deposit address on ${node.id}`);
  const depositScript = keys.scriptOf(owned.address)!;
  await db.transaction(async (tx) => {
    await tx.execute(
      sql`select pg_advisory_xact_lock(hashtext(${`chain-send:${node.id}:${owned.address}`}))`,
    );
    // Another caller with this key signed while this one waited for the lock: its send is the one.
    const [signed] = await tx
      .select({ id: chainSends.id })
      .from(chainSends)
      .where(and(eq(chainSends.idempotencyKey, request.idempotencyKey), ne(chainSends.state, 'rejected')));
    if (signed) return;
    // What this address sent before, unless refused: its inputs are spent, and the change it left at the
    // deposit address is the deposit's too. Read from the stored bytes: a node may not count its pool's
    // spends (btcd's `gettxout` does not). One signed but never broadcast (its caller gone) goes out first,
    // so change built on it is spendable; one the node refuses is set aside.
    const sends = await tx
      .select()
      .from(chainSends)
      .where(
        and(
          eq(chainSends.chainNodeId, node.id),
          eq(chainSends.fromAddress, owned.address),
          ne(chainSends.state, 'rejected'),
        ),
      )
      .orderBy(chainSends.nonce);
    const ours: BitcoinTx[] = [];
    for (const row of sends) {
      if (row.state === 'pending') {
        const refused = await settleBroadcast(tx, client, row).then(
          () => false,
          (error: unknown) => {
            if (error instanceof TransferRejectedError) return true;
            throw error;
          },
        );
        if (refused) continue;
      }
      ours.push(parseTransaction(row.rawTransaction));
    }
    const spent = new Set(ours.flatMap((sent) => sent.inputs.map((input) => `${input.txid}:${input.index}`)));
    const sentByUs = new Set(ours.map((sent) => sent.txid));
    const paid = await tx
      .select({ txHash: chainTransfers.txHash })
      .from(chainTransfers)
      .where(
        and(eq(chainTransfers.transactionId, request.transactionId), eq(chainTransfers.chainNodeId, node.id)),
      );
    const candidates: BitcoinTx[] = [];
    for (const txid of new Set(paid.map((p) => p.txHash))) {
      if (sentByUs.has(txid)) continue;
      candidates.push(parseTransaction(await client.call<string>('getrawtransaction', [txid, 0])));
    }
    candidates.push(...ours);
    // Their outputs to the deposit address not spent yet, oldest first.
    const inputs: { txid: string; index: number; amount: bigint }[] = [];
    for (const candidate of candidates) {
      for (const [index, output] of candidate.outputs.entries()) {
        if (!sameBytes(output.script, depositScript) || spent.has(`${candidate.txid}:${index}`)) continue;
        // Spent in a block by a send not ours to know of (a sweep by ops): not there to spend.
        const unspent = await client.call<unknown>('gettxout', [candidate.txid, index, true]);
        if (unspent === null && !sentByUs.has(candidate.txid)) continue;
        inputs.push({ txid: candidate.txid, index, amount: output.amount });
      }
    }
    const rate = await feeRate(node);
    const chosen: typeof inputs = [];
    let total = 0n;
    for (const input of inputs) {
      if (total >= request.units) break;
      chosen.push(input);
      total += input.amount;
    }
    if (total < request.units) {
      throw new TransferRejectedError(
        `the deposits of ${request.transactionId} hold ${total} satoshis unspent, not the ${request.units} to send`,
      );
    }
    // One P2WPKH input is 68 vbytes, the rest 11; an output at most 43 (to a Taproot or P2WSH address).
    const fee = rate * BigInt(11 + 68 * chosen.length + 43 * 2);
    const sent = request.units - fee;
    if (sent < DUST) {
      throw new TransferRejectedError(`${request.units} satoshis do not cover the network fee of ${fee}`);
    }
    const signer = new Transaction();
    for (const input of chosen) {
      signer.addInput({
        txid: input.txid,
        index: input.index,
        witnessUtxo: { script: depositScript, amount: input.amount },
      });
    }
    signer.addOutput({ script: toScript, amount: sent });
    // Change below the dust limit can be no output (nodes relay none): it goes to the fee, recorded as such.
    const left = total - request.units;
    const change = left >= DUST ? left : 0n;
    if (change > 0n) signer.addOutput({ script: depositScript, amount: change });
    signer.sign(keys.depositKey(owned.hdIndex));
    signer.finalize();
    const next = await nextSendNumber(tx, node.id, owned.address);
    await tx
      .insert(chainSends)
      .values({
        idempotencyKey: request.idempotencyKey,
        chainNodeId: node.id,
        attempt,
        fromAddress: owned.address,
        nonce: next,
        rawTransaction: signer.hex,
        txHash: signer.id,
        feeUnits: total - sent - change,
      })
      .onConflictDoNothing({ target: [chainSends.idempotencyKey, chainSends.attempt] });
  });
}

/**
 * Hands signed bytes to the node. `taken` when the node has the transaction (now, earlier, or in a block);
 * `refused` only on the node's definite verdict against it (Bitcoin Core and btcd answer -25 or -26 when
 * they will not take it: its inputs are spent or missing, a fee they will not relay); any other failure
 * is thrown, the outcome unknown.
 */
async function broadcast(
  client: ReturnType<typeof bitcoinRpc>,
  raw: string,
  txid: string,
): Promise<{ kind: 'taken' } | { kind: 'refused'; reason: string }> {
  try {
    await client.call<string>('sendrawtransaction', [raw]);
    return { kind: 'taken' };
  } catch (error) {
    if (!(error instanceof BitcoinRpcError)) throw error;
    // -27: already in a block. A node that has it in its pool says so in its own words.
    if (error.code === -27 || /already (have|in|known)/i.test(error.message)) return { kind: 'taken' };
    if (error.code !== -25 && error.code !== -26) throw error;
    const known = await client.call<string>('getrawtransaction', [txid, 0]).then(
      () => true,
      () => false,
    );
    return known ? { kind: 'taken' } : { kind: 'refused', reason: error.message };
  }
}

async function feeRate(node: ChainNode): Promise<bigint> {
  const fallback = FALLBACK_RATE[bitcoinKeys(node).chain] ?? 20n;
  try {
    const estimate = await bitcoinRpc(node.rpcUrl).call<{ feerate?: unknown }>('estimatesmartfee', [6], {
      exact: true,
    });
    const rate = estimate.feerate instanceof JsonNumber ? satsPerVbyte(estimate.feerate.text) : undefined;
    return rate ?? fallback;
  } catch {
    return fallback;
  }
}

/**
 * `estimatesmartfee`'s fee rate (BTC per 1,000 vbytes, as the node wrote the number: `0.00001000`, or `1e-7`
 * from a node that writes exponents) in whole satoshis per vbyte, rounded up; undefined when not positive.
 * From the number's text, so no float reaches it.
 */
export function satsPerVbyte(feerate: string): bigint | undefined {
  const plain = plainDecimal(feerate);
  const perKvb = plain === undefined ? undefined : parseUnits(plain, 8);
  if (perKvb === undefined || perKvb <= 0n) return undefined;
  return (perKvb + 999n) / 1000n;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
