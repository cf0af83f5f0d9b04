import { eq } from 'drizzle-orm';
import { BaseError, type Address } from 'viem';
import type { Db } from '../../db/client';
import { cryptoAssets } from '../../db/schema/index';
import type { RegisteredNode } from '../family';
import { ChainNodeError, insertNode, type ChainNodeSpec } from '../nodes';
import type { EvmAddressing } from './addresses';
import { EvmKeys } from './keys';
import { erc20Abi, rpc } from './rpc';

/**
 * A node of Ethereum's JSON-RPC (the EVM family's, TRON's with its own addressing): it must answer, and
 * have a token contract with the catalogue's decimals for every token the catalogue offers on its
 * network. Its treasury makes on-ramp sends and refunds.
 */
export async function registerEvmNode(
  db: Db,
  masterKey: string,
  spec: ChainNodeSpec,
  { seedHex, native }: { seedHex: string; native: string },
  addressing: EvmAddressing,
): Promise<RegisteredNode> {
  const tokens: Record<string, string> = {};
  for (const [code, contract] of Object.entries(spec.tokens)) {
    if (code === native) {
      throw new ChainNodeError(`${code} is the native coin of ${spec.network}, not a token: leave it out.`);
    }
    const hex = addressing.stored(contract);
    if (!hex) throw new ChainNodeError(`${code}: ${contract} is not a contract address.`);
    tokens[code] = hex;
  }

  const client = rpc(spec.rpcUrl);
  const head = await client.getBlockNumber().catch((error: unknown) => {
    const reason = error instanceof BaseError ? error.shortMessage : String(error);
    throw new ChainNodeError(`The node at ${spec.rpcUrl} does not answer: ${reason}`);
  });
  const assets = await db
    .select({ code: cryptoAssets.code, decimals: cryptoAssets.decimals })
    .from(cryptoAssets)
    .where(eq(cryptoAssets.network, spec.network));
  const offered = new Set(assets.map((a) => a.code));
  for (const code of Object.keys(tokens)) {
    if (!offered.has(code)) {
      throw new ChainNodeError(
        `The catalogue offers no ${code} on ${spec.network} (it offers ${[...offered].join(', ')}).`,
      );
    }
  }
  for (const asset of assets) {
    if (asset.code === native) continue;
    const contract = tokens[asset.code] as Address | undefined;
    if (!contract) {
      throw new ChainNodeError(
        `The catalogue offers ${asset.code} on ${spec.network}: give its contract (--token ${asset.code}=${addressing.prefix}...).`,
      );
    }
    const decimals = await client
      .readContract({ address: contract, abi: erc20Abi, functionName: 'decimals' })
      .catch(() => undefined);
    if (decimals !== asset.decimals) {
      throw new ChainNodeError(
        `${asset.code} at ${contract} has ${decimals ?? 'no'} decimals on this node; the catalogue says ${asset.decimals}.`,
      );
    }
  }

  const deep = head - BigInt(spec.confirmations - 1);
  const watchingFrom = deep > 0n ? deep : 0n;
  const tip = await client.getBlock({ blockNumber: watchingFrom });
  const id = await insertNode(db, masterKey, spec, {
    seedHex,
    tokens,
    watchingFrom,
    tipHash: tip.hash,
    chainName: null,
  });
  const treasury = new EvmKeys(seedHex, addressing.coinType).treasury().address;
  return { id, treasury: addressing.shown(treasury), watchingFrom };
}
