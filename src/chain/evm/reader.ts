import {
  decodeFunctionResult,
  encodeFunctionData,
  numberToHex,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
} from 'viem';
import type { ChainReader, Seen } from '../family';
import type { ChainNode } from '../nodes';
import { callMany, erc20Abi, rpc, type Call } from './rpc';

/**
 * Blocks with their transactions asked in one HTTP request, and held at once: a busy chain's ten are a few
 * MB. Asked one at a time, a block cost 96 KB allocated and 0.65 ms of CPU; ten to a request, 14.5 KB and
 * 0.1 ms (anvil). A larger answer than `maxBytes` is asked again block by block.
 */
const BLOCKS = { perRequest: 10, maxBytes: 32 * 1024 * 1024 };
/** Balances asked in one HTTP request: 90 KB and 0.75 ms each one at a time, 3 KB and 0.03 ms fifty. */
const BALANCES = { perRequest: 50, maxBytes: 1024 * 1024 };

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
    async balancesAt(holdings, block) {
      const at = numberToHex(block);
      const calls = holdings.map(({ address, code }): Call => {
        if (code === node.nativeCoin) return { method: 'eth_getBalance', params: [address, at] };
        const contract = node.tokens[code];
        if (!contract) throw new Error(`node ${node.id} watches no ${code}`);
        const data = encodeFunctionData({
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [address as Address],
        });
        return { method: 'eth_call', params: [{ to: contract, data }, at] };
      });
      const answers = await callMany(node.rpcUrl, calls, BALANCES);
      return answers.map((answer, i) =>
        calls[i]!.method === 'eth_getBalance'
          ? BigInt(answer as Hex)
          : decodeFunctionResult({ abi: erc20Abi, functionName: 'balanceOf', data: answer as Hex }),
      );
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

/** A transaction as `eth_getBlockByNumber` gives it, in the fields a native transfer needs. */
interface RawTransaction {
  hash: Hex;
  from: Hex;
  to: Hex | null;
  value: Hex;
}

async function nativeTransfers(node: ChainNode, fromBlock: bigint, toBlock: bigint): Promise<Seen[]> {
  const seen: Seen[] = [];
  if (!node.nativeCoin) return seen;
  // A request's blocks at a time, so a read of 500 holds no more than ten blocks' transactions at once.
  const step = BigInt(BLOCKS.perRequest);
  for (let first = fromBlock; first <= toBlock; first += step) {
    const numbers: bigint[] = [];
    for (let n = first; n <= toBlock && n < first + step; n++) numbers.push(n);
    const blocks = await callMany(
      node.rpcUrl,
      numbers.map((n) => ({ method: 'eth_getBlockByNumber', params: [numberToHex(n), true] })),
      BLOCKS,
    );
    blocks.forEach((block, i) => {
      const number = numbers[i]!;
      // A block the node does not have (past its head, or lost to a reorg since): the read fails, as a
      // block read alone did, and the watcher reads it again.
      if (!block) throw new Error(`${node.network} node ${node.id} has no block ${number}`);
      const { number: answered, transactions } = block as { number: Hex; transactions: RawTransaction[] };
      if (BigInt(answered) !== number)
        throw new Error(`${node.network} node ${node.id} answered block ${BigInt(answered)} for ${number}`);
      for (const tx of transactions) {
        const units = BigInt(tx.value);
        if (!tx.to || units === 0n) continue;
        seen.push({
          txHash: tx.hash,
          block: number,
          from: tx.from.toLowerCase(),
          to: tx.to.toLowerCase(),
          code: node.nativeCoin!,
          units,
        });
      }
    });
  }
  return seen;
}
