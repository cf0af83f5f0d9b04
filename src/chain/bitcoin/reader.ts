import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { chainSends, depositAddresses } from '../../db/schema/index';
import type { ChainNode } from '../nodes';
import type { ChainReader, Seen } from '../family';
import { COINBASE_INPUT, parseBlock, parseTransaction } from './block';
import { bitcoinRpc, BitcoinRpcError } from './rpc';
import { bitcoinKeys } from './keys';

/**
 * Reads a Bitcoin node's blocks for the watcher (no address index needed): every output to a standard
 * address is a candidate; the sender of one that pays a deposit address is the address the transaction's
 * first input spent, read with `getrawtransaction` (btcd `--txindex`, Bitcoin Core `-txindex`). Coinbase
 * outputs are no deposits: they cannot be spent for 100 blocks. Neither are the service's own sends
 * (`chain_sends`): a refund's change goes back to the deposit address.
 */
export function bitcoinReader(node: ChainNode, db: Db): ChainReader {
  const client = bitcoinRpc(node.rpcUrl);
  const keys = bitcoinKeys(node);
  const spends = new Map<string, { txid: string; index: number }>();
  return {
    // A mainnet block is up to 4 MB and pays thousands of addresses: a few at a time.
    batchBlocks: 6n,
    head: async () => BigInt(await client.call<number>('getblockcount')),
    hashAt: (height) => client.call<string>('getblockhash', [Number(height)]),
    async transfers(from, to) {
      const seen: Seen[] = [];
      for (let height = from; height <= to; height++) {
        const hash = await client.call<string>('getblockhash', [Number(height)]);
        for (const tx of parseBlock(await client.call<string>('getblock', [hash, 0]))) {
          const first = tx.inputs[0];
          if (!first || first.txid === COINBASE_INPUT) continue;
          spends.set(tx.txid, first);
          for (const output of tx.outputs) {
            const to = keys.addressOf(output.script);
            if (!to || output.amount === 0n) continue;
            seen.push({
              txHash: tx.txid,
              block: height,
              from: '',
              to,
              code: node.nativeCoin,
              units: output.amount,
            });
          }
        }
      }
      return seen;
    },
    async settle(transfer) {
      // Our own sends from deposit addresses (refunds, their change back to the address) are no deposits;
      // the test faucet's are.
      const [ours] = await db
        .select({ id: chainSends.id })
        .from(chainSends)
        .innerJoin(
          depositAddresses,
          and(
            eq(depositAddresses.address, chainSends.fromAddress),
            eq(depositAddresses.chainNodeId, chainSends.chainNodeId),
          ),
        )
        .where(and(eq(chainSends.chainNodeId, node.id), eq(chainSends.txHash, transfer.txHash)))
        .limit(1);
      if (ours) return { stands: false };
      const first = spends.get(transfer.txHash);
      if (!first) return { stands: true };
      const previous = parseTransaction(await client.call<string>('getrawtransaction', [first.txid, 0]));
      const paid = previous.outputs[first.index];
      return { stands: true, from: paid ? (keys.addressOf(paid.script) ?? '') : '' };
    },
    async locate(txHash) {
      // With its transaction index a node finds it in a block or in its pool; -5 is neither.
      const found = await client
        .call<{ blockhash?: string }>('getrawtransaction', [txHash, 1])
        .catch((error: unknown) => {
          if (error instanceof BitcoinRpcError && error.code === -5) return undefined;
          throw error;
        });
      if (!found) return 'absent';
      if (!found.blockhash) return 'pool';
      const header = await client.call<{ height: number }>('getblockheader', [found.blockhash, true]);
      // A transaction that spends what it does not have never enters a block: one there succeeded.
      return { block: BigInt(header.height), succeeded: true };
    },
  };
}
