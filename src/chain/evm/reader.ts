import { TransactionNotFoundError, TransactionReceiptNotFoundError, type Address, type Hex } from 'viem';
import type { ChainReader, Seen } from '../family';
import type { ChainNode } from '../nodes';
import { erc20Abi, rpc } from './rpc';

/**
 * Reads a node of Ethereum's JSON-RPC (the EVM family's, and TRON's token logs) for the watcher: every ERC-20
 * `Transfer` log of the node's tokens and every native transfer, block by block.
 */
export function evmReader(node: ChainNode): ChainReader {
  const client = rpc(node.rpcUrl);
  return {
    batchBlocks: 500n,
    head: () => client.getBlockNumber({ cacheTime: 0 }),
    hashAt: async (height) => (await client.getBlock({ blockNumber: height })).hash,
    transfers: async (from, to) => [
      ...(await tokenTransfers(node, from, to)),
      ...(await nativeTransfers(node, from, to)),
    ],
    async settle(transfer) {
      // A native transfer counts only if its transaction succeeded; a token's log exists only then.
      if (transfer.code !== node.nativeCoin) return { stands: true };
      const receipt = await client.getTransactionReceipt({ hash: transfer.txHash as `0x${string}` });
      return { stands: receipt.status === 'success' };
    },
    async locate(txHash) {
      const hash = txHash as Hex;
      const receipt = await client.getTransactionReceipt({ hash }).catch((error: unknown) => {
        if (error instanceof TransactionReceiptNotFoundError) return undefined;
        throw error;
      });
      if (receipt) return { block: receipt.blockNumber, succeeded: receipt.status === 'success' };
      const waiting = await client.getTransaction({ hash }).catch((error: unknown) => {
        if (error instanceof TransactionNotFoundError) return undefined;
        throw error;
      });
      return waiting ? 'pool' : 'absent';
    },
    async balanceAt(address, code, block) {
      const owner = address as Address;
      if (code === node.nativeCoin) return client.getBalance({ address: owner, blockNumber: block });
      const contract = node.tokens[code];
      if (!contract) throw new Error(`node ${node.id} watches no ${code}`);
      return client.readContract({
        address: contract as Address,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [owner],
        blockNumber: block,
      });
    },
  };
}

async function tokenTransfers(node: ChainNode, fromBlock: bigint, toBlock: bigint): Promise<Seen[]> {
  const client = rpc(node.rpcUrl);
  const seen: Seen[] = [];
  for (const [code, contract] of Object.entries(node.tokens)) {
    const logs = await client.getLogs({
      address: contract as Address,
      event: erc20Abi[0],
      fromBlock,
      toBlock,
    });
    for (const log of logs) {
      // A zero-value transfer pays nothing (and costs an attacker one transaction's gas): not a deposit.
      if (log.removed || !log.args.to || !log.args.from || !log.args.value) continue;
      seen.push({
        txHash: log.transactionHash,
        block: log.blockNumber ?? fromBlock,
        from: log.args.from.toLowerCase(),
        to: log.args.to.toLowerCase(),
        code,
        units: log.args.value,
      });
    }
  }
  return seen;
}

async function nativeTransfers(node: ChainNode, fromBlock: bigint, toBlock: bigint): Promise<Seen[]> {
  const client = rpc(node.rpcUrl);
  const seen: Seen[] = [];
  if (!node.nativeCoin) return seen;
  for (let number = fromBlock; number <= toBlock; number++) {
    const block = await client.getBlock({ blockNumber: number, includeTransactions: true });
    for (const tx of block.transactions) {
      if (!tx.to || tx.value === 0n) continue;
      seen.push({
        txHash: tx.hash,
        block: number,
        from: tx.from.toLowerCase(),
        to: tx.to.toLowerCase(),
        code: node.nativeCoin,
        units: tx.value,
      });
    }
  }
  return seen;
}
