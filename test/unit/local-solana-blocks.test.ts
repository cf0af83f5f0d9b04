import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSolanaNode } from '../../src/dev/chains/litesvm';

/**
 * The local Solana node's `getBlocksWithLimit` (src/dev/chains/litesvm.ts), which the watcher reads by:
 * the slots that have a block from `start` on, skipped slots left out, at most `limit`, none past what a
 * lagging backend has reached.
 */
let node: LocalSolanaNode;
let url: string;

beforeAll(async () => {
  node = new LocalSolanaNode();
  url = await node.listen();
});

afterAll(() => node.close());

async function blocksWithLimit(start: bigint, limit: number): Promise<bigint[]> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'getBlocksWithLimit',
      params: [Number(start), limit],
    }),
  });
  const { result } = (await response.json()) as { result: number[] };
  return result.map(BigInt);
}

describe('the local Solana node’s blocks by range', () => {
  it('lists the slots with a block from the start, skipping empty slots, up to the limit and the view', async () => {
    const first = node.head();
    node.mine(2);
    node.skip();
    node.mine(3);
    // first, first+1, first+2, (first+3 skipped), first+4, first+5, first+6
    const made = [first, first + 1n, first + 2n, first + 4n, first + 5n, first + 6n];
    expect(node.head()).toBe(first + 6n);
    expect(await blocksWithLimit(first, 100)).toEqual(made);
    expect(await blocksWithLimit(first + 3n, 100)).toEqual(made.slice(3));
    expect(await blocksWithLimit(first + 1n, 2)).toEqual([first + 1n, first + 2n]);
    expect(await blocksWithLimit(first + 7n, 100)).toEqual([]);
    node.blocksLag = 1n;
    expect(await blocksWithLimit(first, 100)).toEqual(made.slice(0, -1));
    node.blocksLag = 2n;
    expect(await blocksWithLimit(first + 4n, 100)).toEqual([first + 4n]);
    node.blocksLag = 0n;
  });
});
