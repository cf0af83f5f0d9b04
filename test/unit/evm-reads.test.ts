import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeFunctionData, encodeFunctionResult, numberToHex, type Hex } from 'viem';
import { evmReader } from '../../src/chain/evm/reader';
import { erc20Abi } from '../../src/chain/evm/rpc';
import type { ChainNode } from '../../src/chain/nodes';

const TOKEN = '0x00000000000000000000000000000000000000aa';
const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;

interface Rpc {
  id: unknown;
  method: string;
  params: unknown[];
}

/**
 * A node of Ethereum's JSON-RPC with `head` blocks, block n paying n wei to address n when n is a multiple of
 * 7 (and nothing else), and every address holding 1,000 times its number of wei and of the token. It counts
 * the HTTP requests it takes, and can refuse batches as some providers do, or fail the call for one block.
 */
class FakeNode {
  server: Server;
  requests: { batch: number | undefined }[] = [];
  refuseBatches = false;
  failingBlock: bigint | undefined;
  /** Fails `failingBlock` only when it is asked in a batch (a provider's per-batch limit, say). */
  failingInBatchesOnly = false;

  constructor(readonly head: number) {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const parsed = JSON.parse(body) as Rpc | Rpc[];
        this.requests.push({ batch: Array.isArray(parsed) ? parsed.length : undefined });
        res.setHeader('content-type', 'application/json');
        if (Array.isArray(parsed) && this.refuseBatches) {
          res.statusCode = 400;
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: null,
              error: { code: -32600, message: 'batches are not supported' },
            }),
          );
          return;
        }
        const batch = Array.isArray(parsed);
        const answer = (call: Rpc) => ({ jsonrpc: '2.0', id: call.id, ...this.answer(call, batch) });
        // A batch's answers in another order than asked, as JSON-RPC allows.
        res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer).reverse() : answer(parsed)));
      });
    });
  }

  answer(call: Rpc, inBatch: boolean): { result: unknown } | { error: { code: number; message: string } } {
    if (call.method === 'eth_getBlockByNumber') {
      const number = BigInt(call.params[0] as string);
      if (number === this.failingBlock && (inBatch || !this.failingInBatchesOnly))
        return { error: { code: -32000, message: `block ${number} is unavailable` } };
      if (number > BigInt(this.head)) return { result: null };
      const n = Number(number);
      const transactions =
        n % 7 === 0
          ? [
              {
                hash: `0x${n.toString(16).padStart(64, '0')}`,
                from: address(1),
                to: address(n),
                value: numberToHex(n),
              },
            ]
          : [{ hash: `0x${'f'.repeat(63)}${n % 10}`, from: address(1), to: null, value: '0x0' }];
      return { result: { number: numberToHex(number), transactions } };
    }
    if (call.method === 'eth_getBalance')
      return { result: numberToHex(BigInt(call.params[0] as string) * 1000n) };
    if (call.method === 'eth_call') {
      const { to, data } = call.params[0] as { to: string; data: Hex };
      const { args } = decodeFunctionData({ abi: erc20Abi, data });
      if (to !== TOKEN) return { result: '0x' };
      const held = BigInt(args[0] as string) * 1000n;
      return { result: encodeFunctionResult({ abi: erc20Abi, functionName: 'balanceOf', result: held }) };
    }
    return { error: { code: -32601, message: `no method ${call.method}` } };
  }

  async start(): Promise<ChainNode> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return {
      id: `fake_${port}`,
      network: 'ETHEREUM',
      rpcUrl: `http://127.0.0.1:${port}`,
      nativeCoin: 'ETH',
      tokens: {},
    } as unknown as ChainNode;
  }
}

/** What block `from` to `to` of the fake node pay, as the reader reports a native transfer. */
const paid = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i)
    .filter((n) => n % 7 === 0)
    .map((n) => ({
      txHash: `0x${n.toString(16).padStart(64, '0')}`,
      block: BigInt(n),
      from: address(1),
      to: address(n),
      code: 'ETH',
      units: BigInt(n),
    }));

const nodes: FakeNode[] = [];
async function fakeNode(head: number): Promise<{ fake: FakeNode; node: ChainNode }> {
  const fake = new FakeNode(head);
  nodes.push(fake);
  return { fake, node: await fake.start() };
}

afterEach(async () => {
  for (const fake of nodes.splice(0)) await new Promise((resolve) => fake.server.close(resolve));
});

describe('reading many blocks and balances of an EVM node (src/chain/evm/reader.ts)', () => {
  it("reads blocks ten to an HTTP request, each block's native transfers in order", async () => {
    const { fake, node } = await fakeNode(100);
    expect(await evmReader(node).transfers(3n, 47n)).toEqual(paid(3, 47));
    // 45 blocks: four requests of ten and one of five.
    expect(fake.requests).toEqual([10, 10, 10, 10, 5].map((batch) => ({ batch })));
  });

  it('asks a node that refuses batches one block at a time, and never batches to it again', async () => {
    const { fake, node } = await fakeNode(100);
    fake.refuseBatches = true;
    expect(await evmReader(node).transfers(1n, 25n)).toEqual(paid(1, 25));
    expect(fake.requests[0]).toEqual({ batch: 10 });
    expect(fake.requests.slice(1)).toEqual(Array(25).fill({ batch: undefined }));
    fake.requests = [];
    expect(await evmReader(node).transfers(26n, 40n)).toEqual(paid(26, 40));
    expect(fake.requests).toEqual(Array(15).fill({ batch: undefined }));
  });

  it("fails the read with the node's own error when a block fails alone, and batches after", async () => {
    const { fake, node } = await fakeNode(100);
    fake.failingBlock = 15n;
    await expect(evmReader(node).transfers(1n, 20n)).rejects.toThrow(/block 15 is unavailable/);
    // The first ten in one request; the second batch failed on block 15, asked again one at a time up to it
    // (viem retries a failed call once).
    expect(fake.requests.slice(0, 2)).toEqual([{ batch: 10 }, { batch: 10 }]);
    expect(fake.requests.slice(2).every((r) => r.batch === undefined)).toBe(true);
    fake.failingBlock = undefined;
    fake.requests = [];
    expect(await evmReader(node).transfers(1n, 20n)).toEqual(paid(1, 20));
    expect(fake.requests).toEqual([{ batch: 10 }, { batch: 10 }]);
  });

  it('asks a batch in which one call failed again one call at a time, and goes on batching', async () => {
    const { fake, node } = await fakeNode(100);
    fake.failingBlock = 15n;
    fake.failingInBatchesOnly = true;
    expect(await evmReader(node).transfers(1n, 30n)).toEqual(paid(1, 30));
    expect(fake.requests).toEqual([
      { batch: 10 },
      { batch: 10 },
      ...Array(10).fill({ batch: undefined }),
      { batch: 10 },
    ]);
  });

  it('fails on a block the node does not have, as a read of that block alone does', async () => {
    const { node } = await fakeNode(30);
    await expect(evmReader(node).transfers(25n, 34n)).rejects.toThrow(/has no block 31/);
  });

  it('reads balances fifty to an HTTP request, native and token, in the order asked', async () => {
    const { fake, node } = await fakeNode(10);
    const reader = evmReader({ ...node, tokens: { USDT: TOKEN } } as ChainNode);
    const holdings = Array.from({ length: 60 }, (_, i) => ({
      address: address(i + 1),
      code: i % 2 === 0 ? 'ETH' : 'USDT',
    }));
    expect(await reader.balancesAt!(holdings, 5n)).toEqual(holdings.map((_, i) => BigInt(i + 1) * 1000n));
    expect(fake.requests).toEqual([{ batch: 50 }, { batch: 10 }]);
    await expect(reader.balancesAt!([{ address: address(1), code: 'DAI' }], 5n)).rejects.toThrow(
      /watches no DAI/,
    );
  });
});
