import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, http, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { freePort } from '../../src/dev/postgres';
import {
  ANVIL_KEYS,
  anvilBinary,
  keepStateOnChange,
  paceBlocks,
  SAVE_WAIT_MAX_MS,
  startAnvil,
  type LocalNode,
} from '../../src/dev/chains/anvil';
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
      // After a write the next look waits 100 times as long as the write took, up to SAVE_WAIT_MAX_MS: on a
      // loaded machine the first write's 0.1 s is 10 s (a fresh clone's npm test missed a 10 s wait once).
      await expect
        .poll(() => BigInt(saved().best_block_number), { timeout: SAVE_WAIT_MAX_MS + 5_000, interval: 20 })
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

describe('the dev anvil state writes under load (keepStateOnChange)', () => {
  it('spaces its writes by how long the last one took, so a long chain costs no more of the time', async () => {
    // A node whose chain moves at every look and whose state takes 50 ms to dump, as a long chain's does.
    let head = 0;
    let dumps = 0;
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const { id, method } = JSON.parse(body) as { id: number; method: string };
        const answer = (result: string) =>
          response
            .setHeader('content-type', 'application/json')
            .end(JSON.stringify({ jsonrpc: '2.0', id, result }));
        if (method === 'eth_blockNumber') return answer(`0x${(++head).toString(16)}`);
        dumps += 1;
        setTimeout(() => answer(`0x${Buffer.from('{"block":{}}').toString('hex')}`), 50);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const dir = mkdtempSync(join(tmpdir(), 'payments-anvil-spacing-'));
    const { port } = server.address() as AddressInfo;
    // Looked at every 20 ms: without the spacing, a write every 70 ms (about 28 in two seconds).
    const saving = keepStateOnChange(`http://127.0.0.1:${port}`, join(dir, 'state.json'), 20);
    try {
      // The first write at the first look, 20 ms in.
      await expect.poll(() => dumps, { timeout: 10_000, interval: 10 }).toBe(1);
      // The next waits at least 100 times the 50 ms that one took: none for the next two seconds.
      await settle(100);
      expect(dumps).toBe(1);
      expect(readFileSync(join(dir, 'state.json'), 'utf8')).toBe('{"block":{}}');
    } finally {
      await saving.stop();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
    expect(dumps).toBe(2); // and once more as it stops
  });
});

describe('the dev anvil state is streamed to its file (keepStateOnChange)', () => {
  it('writes the state while anvil is still answering it, and no file when the answer breaks off', async () => {
    // 6 MB of state JSON, gzipped and hex-encoded as anvil answers it. The first piece ends between the `0`
    // and the `x` of the hex's prefix; the rest goes 7,777 bytes at a time (some split a byte's two digits).
    // Halfway, the answer waits for the file to have begun: a write that decoded the whole answer first
    // would begin only after it.
    const state = JSON.stringify({
      blocks: Array.from({ length: 30_000 }, (_, i) => ({ n: i, h: `${i}`.repeat(40) })),
    });
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: `0x${gzipSync(state).toString('hex')}` });
    const cut = answer.indexOf('"result":"') + '"result":"0'.length;
    const dir = mkdtempSync(join(tmpdir(), 'payments-anvil-stream-'));
    const file = join(dir, 'state.json');
    const begun = () =>
      readdirSync(dir).some((name) => name.endsWith('.partial') && statSync(join(dir, name)).size > 0);
    /** Whether the file began within 5 s. */
    const waitForBegun = async () => {
      const until = Date.now() + 5000;
      while (!begun() && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      return begun();
    };
    let head = 0;
    /** Set, the answer stops halfway and the connection drops, as a node killed while answering. */
    let breakOff = false;
    let writtenWhileAnswering: boolean | undefined;
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const { id, method } = JSON.parse(body) as { id: number; method: string };
        response.setHeader('content-type', 'application/json');
        if (method === 'eth_blockNumber')
          return response.end(JSON.stringify({ jsonrpc: '2.0', id, result: `0x${(++head).toString(16)}` }));
        const pieces = [answer.slice(0, cut), ...answer.slice(cut).match(/[^]{1,7777}/g)!];
        const half = pieces.length / 2;
        const send = async () => {
          await new Promise((resolve) => response.write(pieces.shift(), resolve));
          await new Promise((resolve) => setTimeout(resolve, 50)); // the prefix's piece arrives alone
          while (pieces.length > 1) {
            await new Promise((resolve) => response.write(pieces.shift(), resolve));
            if (pieces.length > half) continue;
            if (breakOff) {
              // Once the file has begun, so the write has a partial file to leave behind.
              await waitForBegun();
              return response.destroy();
            }
            writtenWhileAnswering ??= await waitForBegun();
          }
          response.end(pieces.shift());
        };
        void send();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const saving = keepStateOnChange(`http://127.0.0.1:${port}`, file, 20);
    try {
      await expect
        .poll(() => statSync(file, { throwIfNoEntry: false })?.size, { timeout: 20_000 })
        .toBe(state.length);
      expect(readFileSync(file, 'utf8')).toBe(state);
      expect(writtenWhileAnswering).toBe(true);
      // The node stops while answering the last write: no state file, and no partial one left behind.
      breakOff = true;
      rmSync(file);
    } finally {
      await saving.stop();
      server.close();
    }
    try {
      expect(readdirSync(dir)).toEqual([]);
    } finally {
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
