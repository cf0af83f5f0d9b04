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

/** How long a node that refused a batch is asked one call at a time before a batch is tried again. */
const REFUSAL_MS = 10 * 60_000;

/** The nodes (by URL) that refused a batch, and until when they are asked one call at a time. */
const refusedUntil = new Map<string, number>();

/**
 * Many calls to one node, `perRequest` to an HTTP request as JSON-RPC batches (an answer of `maxBytes` at
 * most), their results in the calls' order: a read of many blocks or balances costs mostly its HTTP
 * requests. A batch not answered call for call (a call failed, the node was busy or slow, the answer too
 * large) is asked again one call at a time, where the node's own error fails the read. A node that refuses
 * batches outright (an HTTP 4xx but 408 and 429, or one error for the whole batch) is asked one
 * call at a time for REFUSAL_MS.
 */
export async function callMany(
  url: string,
  calls: Call[],
  options: { perRequest: number; maxBytes: number },
): Promise<unknown[]> {
  const results: unknown[] = [];
  for (let start = 0; start < calls.length; start += options.perRequest) {
    const chunk = calls.slice(start, start + options.perRequest);
    const batching = chunk.length > 1 && (refusedUntil.get(url) ?? 0) <= Date.now();
    const batch = batching ? await asBatch(url, chunk, options.maxBytes) : undefined;
    if (Array.isArray(batch)) {
      results.push(...batch);
      continue;
    }
    if (batch === 'refused') refusedUntil.set(url, Date.now() + REFUSAL_MS);
    const client = rpc(url);
    for (const call of chunk) results.push(await client.request(call as never));
  }
  return results;
}

interface Answer {
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown } | null;
}

/**
 * One batch's results in its calls' order; `refused` when the node refused the batch itself, `unanswered`
 * when it did not answer every call with a result.
 */
async function asBatch(
  url: string,
  calls: Call[],
  maxBytes: number,
): Promise<unknown[] | 'refused' | 'unanswered'> {
  const body = calls.map((call, id) => ({ ...call, id }));
  let answers: Answer[];
  try {
    answers = (await getHttpRpcClient(url, { timeout: 10_000 }).request({
      body,
      maxResponseBodySize: maxBytes,
    })) as unknown as Answer[];
  } catch (error) {
    const status = (error as { status?: unknown }).status;
    const refused =
      typeof status === 'number' && status >= 400 && status < 500 && ![408, 429].includes(status);
    return refused ? 'refused' : 'unanswered';
  }
  if (!Array.isArray(answers)) return 'unanswered';
  const byId = new Map(answers.map((answer) => [answer?.id, answer]));
  // One error for the whole batch, which viem repeats for each call: under no id, or under the first call's
  // (geth's answer to a batch over its limit).
  if (answers.every((answer) => answer?.error) && new Set(answers.map((answer) => answer?.id)).size === 1)
    return 'refused';
  const results: unknown[] = [];
  for (const call of body) {
    const answer = byId.get(call.id);
    if (!answer || (answer.error !== undefined && answer.error !== null) || !('result' in answer))
      return 'unanswered';
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
