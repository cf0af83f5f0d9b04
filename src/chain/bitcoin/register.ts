import type { Db } from '../../db/client';
import type { RegisteredNode } from '../family';
import { ChainNodeError, insertNode, type ChainNodeSpec } from '../nodes';
import { bitcoinChainOf } from './keys';
import { withoutCredentials } from '../../lib/urls';
import { bitcoinRpc } from './rpc';

/**
 * A Bitcoin node: it must answer, serve mainnet in live mode and a test chain in test mode, and take no
 * tokens. There is no treasury: a refund spends the deposit's own outputs.
 */
export async function registerBitcoinNode(
  db: Db,
  masterKey: string,
  spec: ChainNodeSpec,
  { seedHex }: { seedHex: string },
): Promise<RegisteredNode> {
  if (Object.keys(spec.tokens).length > 0) {
    throw new ChainNodeError(`${spec.network} has no tokens here: leave --token out.`);
  }
  const client = bitcoinRpc(spec.rpcUrl);
  const where = withoutCredentials(spec.rpcUrl);
  const info = await client.call<{ chain: string }>('getblockchaininfo').catch((error: unknown) => {
    throw new ChainNodeError(
      `The node at ${where} does not answer: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  const chain = bitcoinChainOf(info.chain);
  if (!chain) throw new ChainNodeError(`The node at ${where} serves an unknown chain (${info.chain}).`);
  if ((spec.mode === 'live') !== (chain === 'main')) {
    throw new ChainNodeError(
      spec.mode === 'live'
        ? `A live ${spec.network} node must serve mainnet; the one at ${where} serves ${info.chain}.`
        : `A test-mode ${spec.network} node must serve a test chain or regtest, not mainnet.`,
    );
  }
  if (spec.faucetKey && !/^(?:0x)?[0-9a-f]{64}$/i.test(spec.faucetKey)) {
    throw new ChainNodeError('The faucet key must be a 32-byte private key in hex.');
  }
  const head = BigInt(await client.call<number>('getblockcount'));
  // Senders and refunds read transactions by id: the node needs its transaction index.
  if (head > 0n) {
    const first = await client.call<{ tx: string[] }>('getblock', [
      await client.call<string>('getblockhash', [1]),
      1,
    ]);
    const indexed = await client.call<string>('getrawtransaction', [first.tx[0], 0]).then(
      () => true,
      () => false,
    );
    if (!indexed) {
      throw new ChainNodeError(
        `The node at ${where} keeps no transaction index: start it with -txindex (btcd: --txindex).`,
      );
    }
  }
  const deep = head - BigInt(spec.confirmations - 1);
  const watchingFrom = deep > 0n ? deep : 0n;
  const tipHash = await client.call<string>('getblockhash', [Number(watchingFrom)]);
  const id = await insertNode(db, masterKey, spec, {
    seedHex,
    tokens: {},
    watchingFrom,
    tipHash,
    chainName: chain,
  });
  return { id, treasury: null, watchingFrom };
}
