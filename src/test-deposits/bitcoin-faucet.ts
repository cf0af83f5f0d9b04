import { sql } from 'drizzle-orm';
import { Transaction, getAddress } from '@scure/btc-signer';
import type { Db } from '../db/client';
import { chainSends } from '../db/schema/index';
import type { ChainNode } from '../chain/nodes';
import { TransferRejectedError } from '../chain/sends';
import { bitcoinKeys } from '../chain/bitcoin/keys';
import { parseBlock } from '../chain/bitcoin/block';
import { bitcoinRpc, BitcoinRpcError } from '../chain/bitcoin/rpc';

/** Blocks before a coinbase output may be spent. */
const COINBASE_MATURITY = 100;
const FAUCET_FEE = 1_000n;

/**
 * Test mode on a local Bitcoin node: pays `units` satoshis to `to` from the faucet, the key the node mines
 * its blocks to. Each payment spends one mature coinbase (the next block's, in height order, recorded in
 * `chain_sends` with its height as the nonce so no two payments take the same one), its change back to the
 * faucet. Answers the transaction id once the node has taken it.
 */
export async function payFromBitcoinFaucet(
  db: Db,
  node: ChainNode,
  to: string,
  units: bigint,
): Promise<string> {
  const key = faucetKeyOf(node)!;
  const keys = bitcoinKeys(node);
  const client = bitcoinRpc(node.rpcUrl);
  const from = getAddress('wpkh', key, keys.network);
  const fromScript = keys.scriptOf(from)!;
  const toScript = keys.scriptOf(to);
  if (!toScript) throw new TransferRejectedError(`${to} is not an address of this Bitcoin chain`);
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`chain-send:${node.id}:${from}`}))`);
    const [{ used }] = (
      await tx.execute<{ used: number }>(sql`
        select coalesce(max(${chainSends.nonce}), 0)::int as used from ${chainSends}
        where ${chainSends.chainNodeId} = ${node.id} and ${chainSends.fromAddress} = ${from}`)
    ).rows as [{ used: number }];
    const head = await client.call<number>('getblockcount');
    for (let height = used + 1; height <= head - COINBASE_MATURITY; height++) {
      const hash = await client.call<string>('getblockhash', [height]);
      const coinbase = parseBlock(await client.call<string>('getblock', [hash, 0]))[0]!;
      const index = coinbase.outputs.findIndex(
        (o) => o.script.every((b, i) => b === fromScript[i]) && o.script.length === fromScript.length,
      );
      const output = coinbase.outputs[index];
      if (!output || output.amount < units + FAUCET_FEE) continue;
      if ((await client.call<unknown>('gettxout', [coinbase.txid, index, true])) === null) continue;
      const signer = new Transaction();
      signer.addInput({
        txid: coinbase.txid,
        index,
        witnessUtxo: { script: fromScript, amount: output.amount },
      });
      signer.addOutput({ script: toScript, amount: units });
      const change = output.amount - units - FAUCET_FEE;
      if (change >= 546n) signer.addOutput({ script: fromScript, amount: change });
      signer.sign(key);
      signer.finalize();
      await tx.insert(chainSends).values({
        idempotencyKey: `faucet:${node.id}:${height}`,
        chainNodeId: node.id,
        attempt: 1,
        fromAddress: from,
        nonce: height,
        rawTransaction: signer.hex,
        txHash: signer.id,
      });
      try {
        await client.call<string>('sendrawtransaction', [signer.hex]);
      } catch (error) {
        if (error instanceof BitcoinRpcError) throw new TransferRejectedError(error.message);
        throw error;
      }
      return signer.id;
    }
    throw new TransferRejectedError(
      `the test faucet has no mature coin left for ${units} satoshis: mine more blocks on the local node`,
    );
  });
}

/** The faucet's private key: the node's test faucet key, as bytes. */
function faucetKeyOf(node: ChainNode): Uint8Array | undefined {
  return node.faucetKey ? Buffer.from(node.faucetKey.replace(/^0x/, ''), 'hex') : undefined;
}

/** The faucet's address on the node's chain. */
export function faucetAddress(node: ChainNode): string | undefined {
  const key = faucetKeyOf(node);
  return key ? getAddress('wpkh', key, bitcoinKeys(node).network) : undefined;
}
