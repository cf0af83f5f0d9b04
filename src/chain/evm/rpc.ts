/** Ethereum's JSON-RPC as the EVM and TRON families speak it: one client per node URL, the ERC-20 calls. */
import { createPublicClient, http, parseAbi, type Address, type PublicClient } from 'viem';
import { getHttpRpcClient } from 'viem/utils';
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

/** One JSON-RPC call: its method and parameters. */
export interface Call {
  method: string;
  params: unknown[];
}

/** The most one call's answer may hold (viem's own limit for a single call). */
const ONE_ANSWER_BYTES = 10 * 1024 * 1024;

/** The nodes (by URL) found to refuse JSON-RPC batches: this process asks them one call at a time. */
const unbatched = new Set<string>();

/**
 * Many calls to one node, `perRequest` to an HTTP request as JSON-RPC batches, their results in the calls'
 * order. A read of many blocks or balances is mostly the cost of its HTTP requests: asked one at a time, a
 * block with its transactions allocated 96 KB and took 0.7 ms of CPU; 100 to a batch, 20 KB and 0.06 ms
 * (anvil, 600 blocks). A batch not answered call for call is asked again one call at a time, which fails the
 * read with the node's own error if one call fails alone; a node that refused a whole batch (some providers
 * take none) is asked one call at a time from then on, by this process.
 */
export async function callMany(url: string, calls: Call[], perRequest: number): Promise<unknown[]> {
  const results: unknown[] = [];
  for (let start = 0; start < calls.length; start += perRequest) {
    const chunk = calls.slice(start, start + perRequest);
    const batch = chunk.length > 1 && !unbatched.has(url) ? await asBatch(url, chunk) : undefined;
    if (Array.isArray(batch)) {
      results.push(...batch);
      continue;
    }
    const client = rpc(url);
    for (const call of chunk) results.push(await client.request(call as never));
    if (batch === 'refused') unbatched.add(url);
  }
  return results;
}

/**
 * One batch's results in its calls' order; `refused` when the node answered it with no result at all (an
 * HTTP error, one error for the whole batch), `partial` when some calls failed.
 */
async function asBatch(url: string, calls: Call[]): Promise<unknown[] | 'refused' | 'partial'> {
  const body = calls.map((call, id) => ({ ...call, id }));
  // Each call may answer as much as it may alone (viem's 10 MB).
  const answers: unknown = await getHttpRpcClient(url, { timeout: 10_000 })
    .request({ body, maxResponseBodySize: ONE_ANSWER_BYTES * calls.length })
    .catch(() => undefined);
  if (!Array.isArray(answers)) return 'refused';
  const byId = new Map<unknown, { result?: unknown; error?: unknown }>(
    (answers as { id?: unknown; result?: unknown; error?: unknown }[]).map((a) => [a?.id, a ?? {}]),
  );
  const results: unknown[] = [];
  for (const call of body) {
    const answer = byId.get(call.id);
    if (!answer || answer.error !== undefined || !('result' in answer)) {
      const answered = body.some((c) => byId.get(c.id)?.result !== undefined);
      return answered ? 'partial' : 'refused';
    }
    results.push(answer.result);
  }
  return results;
}

/** The asset a node moves for `code`: its ERC-20 contract, or `native` for the network's own coin. */
export function assetOnNode(node: ChainNode, code: string): Address | 'native' | undefined {
  if (code === node.nativeCoin) return 'native';
  const contract = node.tokens[code];
  return contract ? (contract as Address) : undefined;
}
