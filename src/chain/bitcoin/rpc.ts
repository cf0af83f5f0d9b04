import { parseJsonExact } from '../../lib/json';

/**
 * A Bitcoin node's JSON-RPC, limited to the calls btcd and Bitcoin Core answer alike (`getblockcount`,
 * `getblockhash`, `getblock` as raw hex, `getrawtransaction` as raw hex (verbose only for where a
 * transaction is: its `blockhash`), `getblockheader` (its `height`), `sendrawtransaction`, `gettxout`,
 * `getblockchaininfo`): the tests run btcd, production may run either. Amounts are never read
 * from JSON (its numbers are floats): they come from the raw transactions (src/chain/bitcoin/block.ts).
 * The URL carries the node's RPC user and password (`http://user:pass@host:port`).
 */
export interface BitcoinRpc {
  /** With `exact`, the answer's numbers arrive as `JsonNumber`, their text as the node wrote it. */
  call<T>(method: string, params?: unknown[], options?: { exact?: boolean }): Promise<T>;
}

export class BitcoinRpcError extends Error {
  constructor(
    message: string,
    readonly code: number | undefined,
  ) {
    super(message);
  }
}

export function bitcoinRpc(url: string, timeoutMs = 10_000): BitcoinRpc {
  const parsed = new URL(url);
  const auth =
    parsed.username || parsed.password
      ? `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString('base64')}`
      : undefined;
  parsed.username = '';
  parsed.password = '';
  const endpoint = parsed.toString();
  let id = 0;
  return {
    async call<T>(method: string, params: unknown[] = [], options: { exact?: boolean } = {}): Promise<T> {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
        body: JSON.stringify({ jsonrpc: '1.0', id: ++id, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await response.text();
      let body: { result?: T; error?: { code?: number; message?: string } | null };
      try {
        body = (options.exact ? parseJsonExact(text) : JSON.parse(text)) as typeof body;
      } catch {
        throw new BitcoinRpcError(`${method}: HTTP ${response.status} ${text.slice(0, 200)}`, undefined);
      }
      if (body.error) {
        throw new BitcoinRpcError(`${method}: ${body.error.message ?? 'error'}`, body.error.code);
      }
      return body.result as T;
    },
  };
}
