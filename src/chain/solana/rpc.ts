import {
  createDefaultRpcTransport,
  createSolanaRpcFromTransport,
  type Rpc,
  type RpcTransport,
  type SolanaRpcApi,
} from '@solana/kit';

/** How long one call may take: a stalled node must not hold up the watcher's tick for every network. */
const CALL_TIMEOUT_MS = 10_000;

const clients = new Map<string, Rpc<SolanaRpcApi>>();

/** One Solana JSON-RPC client per node URL and process (u64 values come back as bigint, never floats). */
export function solanaRpc(url: string): Rpc<SolanaRpcApi> {
  let client = clients.get(url);
  if (!client) {
    const base = createDefaultRpcTransport({ url });
    const transport = ((config) =>
      base({ ...config, signal: config.signal ?? AbortSignal.timeout(CALL_TIMEOUT_MS) })) as RpcTransport;
    client = createSolanaRpcFromTransport(transport);
    clients.set(url, client);
  }
  return client;
}

/** Solana's public clusters by genesis hash (`getGenesisHash`); any other is a local or private one. */
const CLUSTERS: Readonly<Record<string, string>> = {
  '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d': 'mainnet-beta',
  EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG: 'devnet',
  '4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY': 'testnet',
};

/** The cluster a node serves, from its genesis hash: `mainnet-beta`, `devnet`, `testnet` or `local`. */
export function clusterOf(genesisHash: string): string {
  return CLUSTERS[genesisHash] ?? 'local';
}
