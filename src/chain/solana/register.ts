import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { cryptoAssets } from '../../db/schema/index';
import type { RegisteredNode } from '../family';
import { ChainNodeError, insertNode, type ChainNodeSpec } from '../nodes';
import { TOKEN_PROGRAM, slotMark } from './accounts';
import { SolanaKeys, isSolanaAddress } from './keys';
import { clusterOf, solanaRpc } from './rpc';
import { withoutCredentials } from '../../lib/urls';

/**
 * A Solana node: it must answer, serve mainnet-beta in live mode and any other cluster in test mode (by
 * its genesis hash), and have a mint with the catalogue's decimals for every token the catalogue offers
 * on SOLANA. Its treasury pays the fees of every send and makes on-ramp sends.
 */
export async function registerSolanaNode(
  db: Db,
  masterKey: string,
  spec: ChainNodeSpec,
  { seedHex, native }: { seedHex: string; native: string },
): Promise<RegisteredNode> {
  const client = solanaRpc(spec.rpcUrl);
  const where = withoutCredentials(spec.rpcUrl);
  const genesis = await client
    .getGenesisHash()
    .send()
    .catch((error: unknown) => {
      throw new ChainNodeError(
        `The node at ${where} does not answer: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  const cluster = clusterOf(genesis);
  if ((spec.mode === 'live') !== (cluster === 'mainnet-beta')) {
    throw new ChainNodeError(
      spec.mode === 'live'
        ? `A live ${spec.network} node must serve mainnet-beta; the one at ${where} serves ${cluster}.`
        : `A test-mode ${spec.network} node must serve devnet, testnet or a local cluster, not mainnet-beta.`,
    );
  }
  if (spec.faucetKey && !/^(?:0x)?[0-9a-f]{64}$/i.test(spec.faucetKey)) {
    throw new ChainNodeError('The faucet key must be a 32-byte ed25519 private key in hex.');
  }
  const assets = await db
    .select({ code: cryptoAssets.code, decimals: cryptoAssets.decimals })
    .from(cryptoAssets)
    .where(eq(cryptoAssets.network, spec.network));
  const offered = new Set(assets.map((a) => a.code));
  for (const [code, mint] of Object.entries(spec.tokens)) {
    if (code === native) {
      throw new ChainNodeError(`${code} is the native coin of ${spec.network}, not a token: leave it out.`);
    }
    if (!offered.has(code)) {
      throw new ChainNodeError(
        `The catalogue offers no ${code} on ${spec.network} (it offers ${[...offered].join(', ')}).`,
      );
    }
    if (!isSolanaAddress(mint)) throw new ChainNodeError(`${code}: ${mint} is not a mint address.`);
  }
  for (const asset of assets) {
    if (asset.code === native) continue;
    const mint = spec.tokens[asset.code];
    if (!mint) {
      throw new ChainNodeError(
        `The catalogue offers ${asset.code} on ${spec.network}: give its mint (--token ${asset.code}=<base58 mint>).`,
      );
    }
    // The classic token program's: associated token accounts are derived with it (a Token-2022 mint's
    // deposits would go to other accounts, never read).
    const account = await client
      .getAccountInfo(mint as never, { encoding: 'base64' })
      .send()
      .catch(() => undefined);
    if (account?.value && account.value.owner !== TOKEN_PROGRAM) {
      throw new ChainNodeError(
        `${asset.code} at ${mint} belongs to program ${account.value.owner}, not the SPL token program (${TOKEN_PROGRAM}).`,
      );
    }
    const supply = await client
      .getTokenSupply(mint as never)
      .send()
      .catch(() => undefined);
    if (supply?.value.decimals !== asset.decimals) {
      throw new ChainNodeError(
        `${asset.code} at ${mint} has ${supply?.value.decimals ?? 'no'} decimals on this node (is it a mint?); the catalogue says ${asset.decimals}.`,
      );
    }
  }
  const head = await client.getSlot({ commitment: 'finalized' }).send();
  const deep = head - BigInt(spec.confirmations - 1);
  const watchingFrom = deep > 0n ? deep : 0n;
  const id = await insertNode(db, masterKey, spec, {
    seedHex,
    tokens: { ...spec.tokens },
    watchingFrom,
    tipHash: await slotMark(spec.rpcUrl, watchingFrom),
    chainName: cluster,
  });
  return { id, treasury: new SolanaKeys(seedHex).treasuryAddress(), watchingFrom };
}
