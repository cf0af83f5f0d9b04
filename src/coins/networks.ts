import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { chainNodes } from '../db/schema/index';
import type { Mode } from '../lib/vocabulary';

/**
 * What the domain knows of the networks the chain adapters (src/chain) watch: which networks a node
 * speaking Ethereum's JSON-RPC serves, and whether a node is registered for one. The adapters build on
 * this; the domain never imports them.
 */

/** Networks an EVM node can serve, with the native coin each one pays gas in. */
export const EVM_NATIVE_COINS: Readonly<Record<string, string>> = {
  ETHEREUM: 'ETH',
  BINANCE_SMART_CHAIN: 'BNB',
  POLYGON: 'POL',
  AVALANCHE: 'AVAX',
};

/**
 * Networks whose tokens a node is watched for through Ethereum's JSON-RPC (`eth_getLogs`) without being
 * an EVM network for anything else: TRON nodes answer it for TRC-20 `Transfer` logs. Their native coin
 * moves in the network's own transaction format, so it is not watched, and the service does not sign
 * there: sends and refunds stay on the sandbox chain in test mode (docs/connectors.md).
 */
export const TOKEN_LOG_NETWORKS: Readonly<Record<string, { nativeCoin: string }>> = {
  TRON: { nativeCoin: 'TRX' },
};

/**
 * Networks whose nodes speak Bitcoin's JSON-RPC (btcd or Bitcoin Core): the watcher reads their blocks,
 * deposit addresses are native segwit, and a refund spends the deposit's own outputs.
 */
export const UTXO_NETWORKS: Readonly<Record<string, { nativeCoin: string }>> = {
  BITCOIN: { nativeCoin: 'BTC' },
};

/**
 * Networks whose nodes speak Solana's JSON-RPC: the watcher reads the signatures of each open deposit
 * address's associated token account (SPL tokens only: the catalogue offers no SOL); refunds leave from
 * that account and on-ramp sends from the treasury's, the treasury paying the fees (docs/connectors.md).
 */
export const SOLANA_NETWORKS: Readonly<Record<string, { nativeCoin: string }>> = {
  SOLANA: { nativeCoin: 'SOL' },
};

/**
 * Networks a node watches for token deposits while the service signs no send there (TRON): sends and
 * refunds stay on the sandbox chain in test mode; in live mode a deposit is handed over with no sender to
 * refund to, so whatever is to be given back is held for ops.
 */
export function isDepositOnlyNetwork(network: string): boolean {
  return network in TOKEN_LOG_NETWORKS;
}

/**
 * Networks live mode never takes: OMNI has no node in any registry and Tether stopped issuing USDT on
 * it in 2023; it stays on the sandbox chain in test mode.
 */
export const LIVE_REFUSED_NETWORKS: ReadonlySet<string> = new Set(['OMNI']);

/** Every network a registered node can watch. */
export function isNodeNetwork(network: string): boolean {
  return (
    network in EVM_NATIVE_COINS ||
    network in TOKEN_LOG_NETWORKS ||
    network in UTXO_NETWORKS ||
    network in SOLANA_NETWORKS
  );
}

/** Whether a node on `network` watches deposits in `currency` (TRON's and SOLANA's: tokens, not the coin). */
export function nodeWatchesCurrency(network: string, currency: string | undefined): boolean {
  return (TOKEN_LOG_NETWORKS[network] ?? SOLANA_NETWORKS[network])?.nativeCoin !== currency;
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
