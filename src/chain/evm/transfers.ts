import { and, eq, gte, sql } from 'drizzle-orm';
import {
  BaseError,
  encodeFunctionData,
  keccak256,
  TransactionReceiptNotFoundError,
  WaitForTransactionReceiptTimeoutError,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { Db } from '../../db/client';
import { chainSends } from '../../db/schema/index';
import type { ChainNode } from '../nodes';
import { lastAttempt, TransferRejectedError } from '../sends';
import { erc20Abi, rpc } from './rpc';

export interface Transfer {
  to: Address;
  /** Smallest units of the asset. */
  units: bigint;
  /** The ERC-20 contract, or `native` for the network's own coin. */
  asset: Address | 'native';
}

/**
 * How long one attempt waits for its transaction to be mined before the activity's retry takes over:
 * inside the chain activities' 30-second timeout (workflows/activities.ts), so the attempt ends with
 * this clear reason rather than a timeout.
 */
const MINING_WAIT_MS = 20_000;

/** What a node answers when it will not take a transaction at all (geth, anvil, erigon wordings). */
const REFUSED =
  /insufficient funds|balance too low|gas too low|intrinsic gas|fee cap|underpriced|exceeds block gas limit|max fee per gas less than block base fee/i;

const short = (error: unknown): string =>
  error instanceof BaseError ? error.shortMessage || error.message : String(error);

/**
 * Sends a transfer from `account` at most once per `idempotencyKey`. The signed transaction is stored
 * before it is broadcast; a retry finds it and broadcasts the same bytes, so a lost answer or a crash
 * between broadcast and reply never sends twice. Only an attempt that certainly moved nothing (reverted,
 * or refused by the node) is followed by a new one; a refusal is thrown as `TransferRejectedError` for
 * the caller's retry. Returns the hash once mined, or once the node took it when `wait` is false.
 */
export async function sendOnce(
  db: Db,
  node: ChainNode,
  account: PrivateKeyAccount,
  idempotencyKey: string,
  transfer: Transfer,
  options: { wait?: boolean } = {},
): Promise<string> {
  const wait = options.wait ?? true;
  for (;;) {
    const last = await lastAttempt(db, idempotencyKey);
    if (last && last.state === 'mined') return last.txHash;
    if (last && last.state === 'pending') {
      const outcome = await broadcast(node, last.rawTransaction as Hex, last.txHash as Hex);
      if (outcome.kind === 'rejected') {
        await db.update(chainSends).set({ state: 'rejected' }).where(eq(chainSends.id, last.id));
        throw new TransferRejectedError(outcome.reason);
      }
      if (!wait && outcome.kind === 'in-pool') return last.txHash;
      const receipt =
        outcome.kind === 'mined' ? outcome.receipt : await waitForMining(node, last.txHash as Hex);
      const state = receipt.status === 'success' ? 'mined' : 'reverted';
      await db.update(chainSends).set({ state }).where(eq(chainSends.id, last.id));
      if (state === 'mined') return last.txHash;
      continue;
    }
    await signAttempt(db, node, account, idempotencyKey, (last?.attempt ?? 0) + 1, transfer);
  }
}

/**
 * Signs the next attempt with the account's next free nonce; serialised per account across processes.
 * Our own pending transactions from the first unmined nonce on are broadcast again first (one whose
 * broadcast answer was lost may never have reached the node); the first nonce that is neither taken nor
 * held by one of them is the new attempt's: a refused transaction's, or a gap's, so no gap can hold later
 * transfers back. A pending transaction after that nonce stays valid: it mines once the gap is filled.
 */
async function signAttempt(
  db: Db,
  node: ChainNode,
  account: PrivateKeyAccount,
  idempotencyKey: string,
  attempt: number,
  transfer: Transfer,
): Promise<void> {
  const client = rpc(node.rpcUrl);
  await db.transaction(async (tx) => {
    await tx.execute(
      sql`select pg_advisory_xact_lock(hashtext(${`chain-send:${node.id}:${account.address}`}))`,
    );
    const mined = await client.getTransactionCount({ address: account.address, blockTag: 'latest' });
    const waiting = await tx
      .select()
      .from(chainSends)
      .where(
        and(
          eq(chainSends.chainNodeId, node.id),
          eq(chainSends.fromAddress, account.address),
          eq(chainSends.state, 'pending'),
          gte(chainSends.nonce, mined),
        ),
      )
      .orderBy(chainSends.nonce);
    let next = mined;
    for (const row of waiting) {
      if (row.nonce !== next) break;
      const outcome = await broadcast(node, row.rawTransaction as Hex, row.txHash as Hex);
      if (outcome.kind === 'rejected') {
        await tx.update(chainSends).set({ state: 'rejected' }).where(eq(chainSends.id, row.id));
        break;
      }
      next += 1;
    }
    const raw = await signTransfer(node, account, next, transfer);
    await tx
      .insert(chainSends)
      .values({
        idempotencyKey,
        chainNodeId: node.id,
        attempt,
        fromAddress: account.address,
        nonce: next,
        rawTransaction: raw.serialized,
        txHash: raw.hash,
      })
      .onConflictDoNothing({ target: [chainSends.idempotencyKey, chainSends.attempt] });
  });
}

/** Signs (never broadcasts) a transfer from `account` at `nonce`: the bytes and their hash. */
export async function signTransfer(
  node: ChainNode,
  account: PrivateKeyAccount,
  nonce: number,
  transfer: Transfer,
): Promise<{ serialized: Hex; hash: Hex }> {
  const client = rpc(node.rpcUrl);
  const call =
    transfer.asset === 'native'
      ? { to: transfer.to, value: transfer.units }
      : {
          to: transfer.asset,
          value: 0n,
          data: encodeFunctionData({
            abi: erc20Abi,
            functionName: 'transfer',
            args: [transfer.to, transfer.units],
          }),
        };
  const [chainId, gas, fees] = await Promise.all([
    client.getChainId(),
    client.estimateGas({ account: account.address, ...call }).catch((error: unknown) => {
      // The transfer would fail (a token balance too low, no coin for the value): nothing is signed.
      throw new TransferRejectedError(short(error));
    }),
    client.estimateFeesPerGas(),
  ]);
  const serialized = await account.signTransaction({
    ...call,
    chainId,
    nonce,
    gas,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    type: 'eip1559',
  });
  return { serialized, hash: keccak256(serialized) };
}

type Broadcast =
  { kind: 'mined'; receipt: TransactionReceipt } | { kind: 'in-pool' } | { kind: 'rejected'; reason: string };

/**
 * Hands signed bytes to the node (again, harmlessly, when it has them already). Any answer but a plain
 * refusal leaves the outcome unknown and is thrown, for the caller's retry to ask again.
 */
async function broadcast(node: ChainNode, raw: Hex, hash: Hex): Promise<Broadcast> {
  const client = rpc(node.rpcUrl);
  const mined = await client.getTransactionReceipt({ hash }).catch((error: unknown) => {
    if (error instanceof TransactionReceiptNotFoundError) return undefined;
    throw error;
  });
  if (mined) return { kind: 'mined', receipt: mined };
  try {
    await client.sendRawTransaction({ serializedTransaction: raw });
  } catch (error) {
    const text = `${short(error)} ${error instanceof BaseError ? error.details : ''}`;
    // The node has it already, or mined it meanwhile: waiting tells which.
    if (/already known|already imported|nonce too low/i.test(text)) return { kind: 'in-pool' };
    if (REFUSED.test(text)) return { kind: 'rejected', reason: short(error) };
    throw error;
  }
  return { kind: 'in-pool' };
}

/** A transaction not mined in time is an unknown outcome: the error makes the caller ask again later. */
async function waitForMining(node: ChainNode, hash: Hex): Promise<TransactionReceipt> {
  try {
    return await rpc(node.rpcUrl).waitForTransactionReceipt({
      hash,
      timeout: MINING_WAIT_MS,
      pollingInterval: 250,
    });
  } catch (error) {
    if (error instanceof WaitForTransactionReceiptTimeoutError) {
      throw new Error(`transaction ${hash} is not mined yet on ${node.network}; asking again on retry`);
    }
    throw error;
  }
}
