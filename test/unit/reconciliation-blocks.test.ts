import { describe, expect, it } from 'vitest';
import { blockRanges, type ChainCutOffs } from '../../src/reconciliation/runs';

/** Nodes whose watchers stand at `cutOffs`, each of whose first recorded deposit is at `first`. */
const chains = (cutOffs: Record<string, string>, first: Record<string, string> = {}): ChainCutOffs => ({
  cutOffs: async () => cutOffs,
  firstBlock: async (nodeId, cutOff) => first[nodeId] ?? cutOff,
  blocksPerRun: 100n,
});

describe("a reconciliation run's chain blocks (docs/reconciliation.md)", () => {
  it("reads a node's first run from its first recorded deposit, or its cut-off when it has none", async () => {
    expect(await blockRanges(chains({ a: '250', b: '40' }, { a: '200' }), undefined)).toEqual({
      a: { from: '200', to: '250' },
      b: { from: '40', to: '40' },
    });
  });

  it('goes on from just past the previous scheduled run, up to the cut-off', async () => {
    expect(await blockRanges(chains({ a: '260' }), { a: { from: '200', to: '250' } })).toEqual({
      a: { from: '251', to: '260' },
    });
  });

  it('reads nothing when the watcher read nothing new, or went back to read a lost block again', async () => {
    expect(
      await blockRanges(chains({ a: '250', b: '240' }), {
        a: { from: '200', to: '250' },
        b: { from: '200', to: '250' },
      }),
    ).toEqual({
      a: { from: '251', to: '250' },
      b: { from: '251', to: '240' },
    });
  });

  it('reads a backlog over several runs, at most blocksPerRun each', async () => {
    const first = await blockRanges(chains({ a: '1000' }, { a: '10' }), undefined);
    expect(first).toEqual({ a: { from: '10', to: '109' } });
    expect(await blockRanges(chains({ a: '1000' }), first)).toEqual({ a: { from: '110', to: '209' } });
  });
});
