import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, http, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { freePort } from '../../src/dev/postgres';
import { ANVIL_KEYS, anvilBinary, paceBlocks, startAnvil, type LocalNode } from '../../src/dev/chains/anvil';
import { rpc } from '../../src/chain/evm/rpc';
import { LocalSolanaNode, mintTestToken, paceSolanaBlocks, randomSigner } from '../../src/dev/chains/litesvm';

const DEPTH = 2;
const customer = privateKeyToAccount(ANVIL_KEYS.customer).address;
let node: LocalNode;
let pacer: { stop(): void };

beforeAll(async () => {
  const binary = anvilBinary();
  if (!binary) throw new Error('anvil is not installed (optional dependency @foundry-rs/anvil-linux-amd64)');
  node = await startAnvil({ binary, port: await freePort(), chainId: 137 });
  pacer = paceBlocks(node.url, { depth: DEPTH, intervalMs: 20 });
});
afterAll(async () => {
  pacer?.stop();
  await node?.stop();
});

const head = () => rpc(node.url).getBlockNumber({ cacheTime: 0 });
/** Lets the pacer look at least `ticks` more times (it looks every 20 ms; slower on a loaded machine only means fewer looks). */
const settle = (ticks: number) => new Promise((r) => setTimeout(r, ticks * 20));

describe('the dev chains pace their blocks (paceBlocks)', () => {
  it('mines the depth after a transaction, then no block while nothing happens', async () => {
    await expect.poll(head, { timeout: 10_000, interval: 20 }).toBe(BigInt(DEPTH));
    await settle(25);
    expect(await head()).toBe(BigInt(DEPTH));

    const account = privateKeyToAccount(ANVIL_KEYS.deployer);
    const wallet = createWalletClient({ account, transport: http(node.url) });
    const chain = {
      id: 137,
      name: 'local',
      nativeCurrency: { name: 'POL', symbol: 'POL', decimals: 18 },
      rpcUrls: { default: { http: [node.url] } },
    };
    const hash = await wallet.sendTransaction({ to: customer, value: parseEther('1'), chain });
    const receipt = await rpc(node.url).waitForTransactionReceipt({ hash, pollingInterval: 20 });
    await expect.poll(head, { timeout: 10_000, interval: 20 }).toBe(receipt.blockNumber + BigInt(DEPTH));
    await settle(25);
    expect(await head()).toBe(receipt.blockNumber + BigInt(DEPTH));
  });
});

describe('the dev Solana node paces its blocks too (paceSolanaBlocks)', () => {
  it('makes the depth of blocks after a transaction, then none while nothing happens', async () => {
    const solana = new LocalSolanaNode();
    const start = solana.head();
    const paced = paceSolanaBlocks(solana, { depth: DEPTH, intervalMs: 20 });
    try {
      await settle(25);
      expect(solana.head()).toBe(start);

      // Two transactions, each in a block of its own; the pacer follows the last.
      await mintTestToken(solana, (await randomSigner()).signer, 6, 1n);
      const landed = solana.head();
      await expect.poll(() => solana.head(), { timeout: 10_000, interval: 20 }).toBe(landed + BigInt(DEPTH));
      await settle(25);
      expect(solana.head()).toBe(landed + BigInt(DEPTH));
    } finally {
      paced.stop();
    }
  });
});
