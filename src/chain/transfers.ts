import { and, desc, eq, sql } from 'drizzle-orm';
import {
  encodeFunctionData,
  keccak256,
  TransactionReceiptNotFoundError,
  WaitForTransactionReceiptTimeoutError,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { Db } from '../db/client';
import { chainSends } from '../db/schema/index';
import { erc20Abi, rpc, type ChainNode } from './nodes';

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

/** Sends a transfer from the node's treasury at most once per `idempotencyKey` (see `sendOnce`). */
export function sendFromTreasury(db: Db, node: ChainNode, idempotencyKey: string, transfer: Transfer) {
  return sendOnce(db, node, node.keys.treasury(), idempotencyKey, transfer);
}

/**
 * Sends a transfer from `account` at most once per `idempotencyKey`. The signed transaction is
 * stored before it is broadcast; a retry finds it and broadcasts the same bytes, so a lost answer or a
 * crash between broadcast and reply never sends twice. Only a reverted attempt (which moved nothing) is
 * followed by a new one. Returns the hash of the mined transaction.
 */
export async function sendOnce(
  db: Db,
  node: ChainNode,
  account: PrivateKeyAccount,
  idempotencyKey: string,
  transfer: Transfer,
): Promise<string> {
  for (;;) {
    const [last] = await db
      .select()
      .from(chainSends)
      .where(eq(chainSends.idempotencyKey, idempotencyKey))
      .orderBy(desc(chainSends.attempt))
      .limit(1);
    if (last && last.state === 'mined') return last.txHash;
    if (last && last.state === 'pending') {
      const receipt = await broadcastAndWait(node, last.rawTransaction as Hex, last.txHash as Hex);
      const state = receipt.status === 'success' ? 'mined' : 'reverted';
      await db.update(chainSends).set({ state }).where(eq(chainSends.id, last.id));
      if (state === 'mined') return last.txHash;
      continue;
    }
    await signAttempt(db, node, account, idempotencyKey, (last?.attempt ?? 0) + 1, transfer);
  }
}

/** Signs the next attempt with the account's next nonce; serialised per account across processes. */
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
    const [used] = await tx
      .select({ next: sql<string | null>`max(${chainSends.nonce}) + 1` })
      .from(chainSends)
      .where(and(eq(chainSends.chainNodeId, node.id), eq(chainSends.fromAddress, account.address)));
    const onChain = await client.getTransactionCount({ address: account.address, blockTag: 'pending' });
    const nonce = Math.max(onChain, Number(used?.next ?? 0));
    const raw = await signTransfer(node, account, nonce, transfer);
    await tx
      .insert(chainSends)
      .values({
        idempotencyKey,
        chainNodeId: node.id,
        attempt,
        fromAddress: account.address,
        nonce,
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
    client.estimateGas({ account: account.address, ...call }),
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

/**
 * Broadcasts signed bytes (again, harmlessly, when the node already has them) and waits for the receipt.
 * A transaction not mined in time is an unknown outcome: the error makes the activity retry, which asks
 * again with the same bytes.
 */
export async function broadcastAndWait(node: ChainNode, raw: Hex, hash: Hex): Promise<TransactionReceipt> {
  const client = rpc(node.rpcUrl);
  const mined = await client.getTransactionReceipt({ hash }).catch((error: unknown) => {
    if (error instanceof TransactionReceiptNotFoundError) return undefined;
    throw error;
  });
  if (mined) return mined;
  await client.sendRawTransaction({ serializedTransaction: raw }).catch((error: unknown) => {
    // The node has it already (or mined it meanwhile): waiting below tells which.
    if (!/already known|nonce too low|already imported/i.test(String(error))) throw error;
  });
  try {
    return await client.waitForTransactionReceipt({ hash, timeout: MINING_WAIT_MS, pollingInterval: 250 });
  } catch (error) {
    if (error instanceof WaitForTransactionReceiptTimeoutError) {
      throw new Error(`transaction ${hash} is not mined yet on ${node.network}; asking again on retry`);
    }
    throw error;
  }
}
