import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { chainNodes } from '../db/schema/index';
import type { Mode } from '../lib/vocabulary';

/**
 * What the domain knows of the networks the chain adapters (src/chain) watch: which family serves each
 * network a node can watch, and whether a node is registered for one. The adapters build on this; the
 * domain never imports them.
 */

/** The chain families (src/chain/<family>/): how a network's nodes are read, keyed and signed for. */
export type ChainFamilyName = 'evm' | 'tron' | 'bitcoin' | 'solana';

/** A network a registered node can watch. */
export interface NodeNetwork {
  /** The family that serves it. */
  family: ChainFamilyName;
  /** The coin the network pays its fees in. */
  nativeCoin: string;
  /** Whether the node is watched for the native coin too, or for the catalogue's tokens only. */
  watchesNativeCoin: boolean;
  /**
   * Whether the service signs sends there. Where it does not (TRON: its native transaction format is not
   * signed here), sends and refunds stay on the sandbox chain in test mode; in live mode a deposit is
   * handed over with no sender to refund to, so whatever is to be given back is held for ops.
   */
  signs: boolean;
}

const evm = (nativeCoin: string): NodeNetwork => ({
  family: 'evm',
  nativeCoin,
  watchesNativeCoin: true,
  signs: true,
});

/**
 * Every network a node can watch, by family (docs/connectors.md). EVM networks: Ethereum's JSON-RPC,
 * the coin and ERC-20 tokens. TRON: its Ethereum-compatible JSON-RPC answers `eth_getLogs` for TRC-20
 * `Transfer` logs, the tokens only. Bitcoin: its JSON-RPC (btcd or Bitcoin Core), native segwit deposit
 * addresses, a refund spending the deposit's own outputs. Solana: its JSON-RPC, SPL tokens only (the
 * catalogue offers no SOL), refunds from the deposit's token account, sends from the treasury's.
 */
export const NODE_NETWORKS: Readonly<Record<string, NodeNetwork>> = {
  ETHEREUM: evm('ETH'),
  BINANCE_SMART_CHAIN: evm('BNB'),
  POLYGON: evm('POL'),
  AVALANCHE: evm('AVAX'),
  TRON: { family: 'tron', nativeCoin: 'TRX', watchesNativeCoin: false, signs: false },
  BITCOIN: { family: 'bitcoin', nativeCoin: 'BTC', watchesNativeCoin: true, signs: true },
  SOLANA: { family: 'solana', nativeCoin: 'SOL', watchesNativeCoin: false, signs: true },
};

/** The network a node can watch, when `network` is one. */
export function nodeNetwork(network: string): NodeNetwork | undefined {
  return Object.hasOwn(NODE_NETWORKS, network) ? NODE_NETWORKS[network] : undefined;
}

/** Networks a node watches for token deposits while the service signs no send there (TRON). */
export function isDepositOnlyNetwork(network: string): boolean {
  return nodeNetwork(network)?.signs === false;
}

/**
 * Networks live mode never takes: OMNI has no node in any registry and Tether stopped issuing USDT on
 * it in 2023; it stays on the sandbox chain in test mode.
 */
export const LIVE_REFUSED_NETWORKS: ReadonlySet<string> = new Set(['OMNI']);

/** Every network a registered node can watch. */
export function isNodeNetwork(network: string): boolean {
  return nodeNetwork(network) !== undefined;
}

/** Whether a node on `network` watches deposits in `currency` (TRON's and SOLANA's: tokens, not the coin). */
export function nodeWatchesCurrency(network: string, currency: string | undefined): boolean {
  const node = nodeNetwork(network);
  return !node || node.watchesNativeCoin || node.nativeCoin !== currency;
}

/** Whether a node watches `network` for `mode` (no secrets read), and `currency` on it when given. */
export async function isWatched(db: Db, mode: Mode, network: string, currency?: string): Promise<boolean> {
  if (currency !== undefined && !nodeWatchesCurrency(network, currency)) return false;
  const rows = await db
    .select({ id: chainNodes.id })
    .from(chainNodes)
    .where(and(eq(chainNodes.mode, mode), eq(chainNodes.network, network), eq(chainNodes.active, true)));
  return rows.length > 0;
}
