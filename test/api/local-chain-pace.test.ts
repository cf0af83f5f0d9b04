import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** Sends the customer `pol` from anvil's deployer account on the chain (id 137) at `url`; its receipt. */
async function payCustomer(url: string, pol: string) {
  const account = privateKeyToAccount(ANVIL_KEYS.deployer);
  const wallet = createWalletClient({ account, transport: http(url) });
  const chain = {
    id: 137,
    name: 'local',
    nativeCurrency: { name: 'POL', symbol: 'POL', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  };
  const hash = await wallet.sendTransaction({ to: customer, value: parseEther(pol), chain });
  return rpc(url).waitForTransactionReceipt({ hash, pollingInterval: 20 });
}

describe('the dev chains pace their blocks (paceBlocks)', () => {
  it('mines the depth after a transaction, then no block while nothing happens', async () => {
    await expect.poll(head, { timeout: 10_000, interval: 20 }).toBe(BigInt(DEPTH));
    await settle(25);
    expect(await head()).toBe(BigInt(DEPTH));

    const receipt = await payCustomer(node.url, '1');
    await expect.poll(head, { timeout: 10_000, interval: 20 }).toBe(receipt.blockNumber + BigInt(DEPTH));
    await settle(25);
    expect(await head()).toBe(receipt.blockNumber + BigInt(DEPTH));
  });
});

describe('the dev anvil keeps its state file (startAnvil with stateFile)', () => {
  it('writes it when the chain moves and as the node stops, not while idle, and a hard kill keeps what was written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payments-anvil-state-'));
    const file = join(dir, 'state.json');
    const binary = anvilBinary()!;
    const saved = () => JSON.parse(readFileSync(file, 'utf8')) as { best_block_number: string };
    const savedAt = () => statSync(file, { throwIfNoEntry: false })?.mtimeMs;
    /** A node on the state file, compared with it every 20 ms. */
    const start = async () =>
      startAnvil({ binary, port: await freePort(), chainId: 137, stateFile: file, stateIntervalMs: 20 });
    let first: LocalNode | undefined;
    let second: LocalNode | undefined;
    try {
      first = await start();
      // A new chain is written once; then, idle, never again.
      await expect.poll(savedAt, { timeout: 10_000, interval: 20 }).toBeDefined();
      const idleSince = savedAt();
      await settle(25);
      expect(savedAt()).toBe(idleSince);

      const receipt = await payCustomer(first.url, '3');
      await expect
        .poll(() => BigInt(saved().best_block_number), { timeout: 10_000, interval: 20 })
        .toBe(receipt.blockNumber);
      const balance = await rpc(first.url).getBalance({ address: customer });

      // As a hard kill would: anvil writes nothing as it dies, the file has the chain as it was.
      process.kill(first.pid!, 'SIGKILL');
      await first.stop();
      first = undefined;
      second = await start();
      expect(await rpc(second.url).getBlockNumber({ cacheTime: 0 })).toBe(receipt.blockNumber);
      expect(await rpc(second.url).getBalance({ address: customer })).toBe(balance);

      // A change without a block, as a developer's anvil_setBalance makes, is kept when the node stops.
      await rpc(second.url).request({
        method: 'anvil_setBalance' as never,
        params: [customer, '0x2a'] as never,
      });
      await second.stop();
      second = await start();
      expect(await rpc(second.url).getBalance({ address: customer })).toBe(42n);
    } finally {
      await first?.stop();
      await second?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
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
