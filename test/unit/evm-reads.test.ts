import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
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
 * A node of Ethereum's JSON-RPC with `head` blocks: block n pays n wei to address 0xdef0 + n when n is a
 * multiple of 7; other blocks hold a transfer of nothing, a contract made with value, or no transaction.
 * It counts the HTTP requests it takes, and can refuse batches as providers do, or fail one block's call.
 */
class FakeNode {
  server: Server;
  requests: { batch: number | undefined }[] = [];
  /** How the node takes a batch: answers each call, or refuses it (HTTP 400, or geth's one error, 200). */
  batches: 'answered' | 'refused-400' | 'refused-bare' | 'refused-geth' | 'busy-429' | 'half-answered' =
    'answered';
  /** Answers carry `"error": null` beside their result, as some servers write them. */
  nullErrors = false;
  failingBlock: bigint | undefined;
  /** Answers the block after the one asked for (a proxy that mixed its answers up). */
  answersNextBlock = false;
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
        const refusal = (id: unknown) => ({
          jsonrpc: '2.0',
          id,
          error: { code: -32600, message: 'batch too large' },
        });
        if (Array.isArray(parsed) && this.batches !== 'answered' && this.batches !== 'half-answered') {
          const statuses = { 'refused-400': 400, 'refused-bare': 200, 'refused-geth': 200, 'busy-429': 429 };
          res.statusCode = statuses[this.batches];
          const answers = {
            'refused-400': refusal(null),
            // One error, under no id.
            'refused-bare': refusal(null),
            // geth's: one error in an array, under the first call's id.
            'refused-geth': [refusal(parsed[0]!.id)],
            'busy-429': { error: 'slow down' },
          };
          res.end(JSON.stringify(answers[this.batches]));
          return;
        }
        const batch = Array.isArray(parsed);
        const answer = (call: Rpc) => ({
          jsonrpc: '2.0',
          id: call.id,
          ...(this.nullErrors ? { error: null } : {}),
          ...this.answer(call, batch),
        });
        // A batch's answers in another order than asked, as JSON-RPC allows.
        const answers = Array.isArray(parsed) ? parsed.map(answer).reverse() : answer(parsed);
        res.end(
          JSON.stringify(
            Array.isArray(answers) && this.batches === 'half-answered'
              ? answers.slice(0, answers.length / 2)
              : answers,
          ),
        );
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
      const hash = `0x${n.toString(16).padStart(64, '0')}`;
      // Addresses as a node may write them, checksummed (mixed case).
      const [from, to] = [address(0xabc), address(0xdef0 + n)].map((a) => `0x${a.slice(2).toUpperCase()}`);
      const transactions =
        n % 7 === 0
          ? [{ hash, from, to, value: numberToHex(n) }]
          : n % 3 === 0
            ? [{ hash, from, to, value: '0x0' }] // pays nothing
            : n % 3 === 1
              ? [{ hash, from, to: null, value: '0x5' }] // makes a contract
              : [];
      return { result: { number: numberToHex(number + (this.answersNextBlock ? 1n : 0n)), transactions } };
    }
    // An address holds 1,000 times its number of wei and of the token, plus the block's number.
    const at = BigInt(call.params[1] as string);
    if (call.method === 'eth_getBalance')
      return { result: numberToHex(BigInt(call.params[0] as string) * 1000n + at) };
    if (call.method === 'eth_call') {
      const { to, data } = call.params[0] as { to: string; data: Hex };
      const { args } = decodeFunctionData({ abi: erc20Abi, data });
      if (to !== TOKEN) return { result: '0x' };
      const held = BigInt(args[0] as string) * 1000n + at;
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
      // A path of its own: what the reader remembers of a node (a refusal) is by URL, and ports come back.
      rpcUrl: `http://127.0.0.1:${port}/${randomUUID()}`,
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
      from: address(0xabc),
      to: address(0xdef0 + n),
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

  it('reads answers whose error is null beside their result', async () => {
    const { fake, node } = await fakeNode(100);
    fake.nullErrors = true;
    expect(await evmReader(node).transfers(1n, 20n)).toEqual(paid(1, 20));
    expect(fake.requests).toEqual([{ batch: 10 }, { batch: 10 }]);
  });

  for (const refusal of ['refused-400', 'refused-bare', 'refused-geth'] as const)
    it(`asks a node that refuses batches (${refusal}) one block at a time, for ten minutes`, async () => {
      const { fake, node } = await fakeNode(100);
      fake.batches = refusal;
      expect(await evmReader(node).transfers(1n, 25n)).toEqual(paid(1, 25));
      expect(fake.requests).toEqual([{ batch: 10 }, ...Array(25).fill({ batch: undefined })]);
      fake.requests = [];
      expect(await evmReader(node).transfers(26n, 40n)).toEqual(paid(26, 40));
      expect(fake.requests).toEqual(Array(15).fill({ batch: undefined }));
      // Ten minutes on, a batch is tried again.
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 10 * 60_000 + 1 });
      try {
        fake.batches = 'answered';
        fake.requests = [];
        expect(await evmReader(node).transfers(41n, 60n)).toEqual(paid(41, 60));
        expect(fake.requests).toEqual([{ batch: 10 }, { batch: 10 }]);
      } finally {
        vi.useRealTimers();
      }
    });

  for (const unanswered of ['busy-429', 'half-answered'] as const)
    it(`asks a batch not answered in full (${unanswered}) one call at a time, and batches on`, async () => {
      const { fake, node } = await fakeNode(100);
      fake.batches = unanswered;
      expect(await evmReader(node).transfers(1n, 10n)).toEqual(paid(1, 10));
      expect(fake.requests).toEqual([{ batch: 10 }, ...Array(10).fill({ batch: undefined })]);
      fake.batches = 'answered';
      fake.requests = [];
      expect(await evmReader(node).transfers(11n, 20n)).toEqual(paid(11, 20));
      expect(fake.requests).toEqual([{ batch: 10 }]);
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

  it("fails the read with the node's own error when a block fails alone, and batches after", async () => {
    const { fake, node } = await fakeNode(100);
    fake.failingBlock = 15n;
    await expect(evmReader(node).transfers(1n, 20n)).rejects.toThrow(/block 15 is unavailable/);
    // The first ten in one request; the second failed on block 15, asked again one at a time up to it.
    expect(fake.requests).toEqual([{ batch: 10 }, { batch: 10 }, ...Array(5).fill({ batch: undefined })]);
    fake.failingBlock = undefined;
    fake.requests = [];
    expect(await evmReader(node).transfers(1n, 20n)).toEqual(paid(1, 20));
    expect(fake.requests).toEqual([{ batch: 10 }, { batch: 10 }]);
  });

  it('fails on an answer for another block than the one asked for', async () => {
    const { fake, node } = await fakeNode(30);
    fake.answersNextBlock = true;
    await expect(evmReader(node).transfers(1n, 10n)).rejects.toThrow(/answered block 2 for 1/);
  });

  it('fails on a block the node does not have, as a read of that block alone does', async () => {
    const { node } = await fakeNode(30);
    await expect(evmReader(node).transfers(25n, 34n)).rejects.toThrow(/has no block 31/);
  });

  it('reads balances fifty to an HTTP request, native and token, at the block asked, in order', async () => {
    const { fake, node } = await fakeNode(10);
    const reader = evmReader({ ...node, tokens: { USDT: TOKEN } } as ChainNode);
    const holdings = Array.from({ length: 60 }, (_, i) => ({
      address: address(i + 1),
      code: i % 2 === 0 ? 'ETH' : 'USDT',
    }));
    expect(await reader.balancesAt!(holdings, 5n)).toEqual(
      holdings.map((_, i) => BigInt(i + 1) * 1000n + 5n),
    );
    expect(fake.requests).toEqual([{ batch: 50 }, { batch: 10 }]);
    await expect(reader.balancesAt!([{ address: address(1), code: 'DAI' }], 5n)).rejects.toThrow(
      /watches no DAI/,
    );
  });
});
