/** Ethereum's JSON-RPC as the EVM and TRON families speak it: one client per node URL, the ERC-20 calls. */
import { createPublicClient, http, parseAbi, type Address, type PublicClient } from 'viem';
import type { ChainNode } from '../nodes';

export const erc20Abi = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
  'function decimals() view returns (uint8)',
]);

const clients = new Map<string, PublicClient>();

/** One JSON-RPC client per node URL and process. */
export function rpc(url: string): PublicClient {
  let client = clients.get(url);
  if (!client) {
    client = createPublicClient({ transport: http(url, { retryCount: 1, timeout: 10_000 }) });
    clients.set(url, client);
  }
  return client;
}

/** The asset a node moves for `code`: its ERC-20 contract, or `native` for the network's own coin. */
export function assetOnNode(node: ChainNode, code: string): Address | 'native' | undefined {
  if (code === node.nativeCoin) return 'native';
  const contract = node.tokens[code];
  return contract ? (contract as Address) : undefined;
}
