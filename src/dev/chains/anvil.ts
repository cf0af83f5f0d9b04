/**
 * A local Ethereum node for `npm run dev` and the tests: Foundry's anvil (from npm), our test stablecoin
 * deployed to it, a treasury funded, and the node registered for test mode. Never used in production;
 * there a node is registered with `payments chains add` (docs/connectors.md).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { fromRoot } from '../../platform/root';
import { createWalletClient, http, parseEther, type Abi, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Db } from '../../db/client';
import { findCryptoAsset } from '../../coins/catalogue';
import { activeChainNode } from '../../chain/nodes';
import { familyOfNetwork } from '../../chain/families';
import { rpc } from '../../chain/evm/rpc';
import { addChainNode } from '../../chain/registration';
import type { Mode } from '../../lib/vocabulary';
import { stopChild } from '../child';

/** Anvil's default accounts (its public test mnemonic): 0 deploys and funds, 1 is the test customer. */
export const ANVIL_KEYS = {
  deployer: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  customer: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
} as const satisfies Record<string, Hex>;

export interface LocalNode {
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

/** The anvil binary: `explicit` when given, else the one the npm package ships for Linux x64. */
export function anvilBinary(explicit?: string): string | undefined {
  if (explicit) return explicit;
  try {
    const manifest = createRequire(import.meta.url).resolve('@foundry-rs/anvil-linux-amd64/package.json');
    const binary = join(dirname(manifest), 'bin', 'anvil');
    return existsSync(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts anvil on loopback. Without `blockTimeSeconds` every transaction is mined at once in its own block
 * (tests mine more blocks themselves, dev paces them with `paceBlocks`); with it, a block comes every so
 * often, empty or not. `stateFile` keeps the chain across restarts: anvil loads it at start and writes it
 * as it exits (a Ctrl-C reaches it too), and `keepStateOnChange` writes it while it runs, so a hard kill
 * of both loses what changed since the last look (2 s; up to 30 s for a long chain). Anvil's own write on
 * exit is in place: a kill in the middle of it leaves the file cut short (delete it: the next start makes a
 * fresh chain).
 */
export async function startAnvil(options: {
  binary: string;
  port: number;
  /** The chain id the node answers (`eth_chainId`); anvil's 31337 when absent. */
  chainId?: number;
  blockTimeSeconds?: number;
  stateFile?: string;
  /** How often the state file's chain is compared with the node's (2 s). */
  stateIntervalMs?: number;
}): Promise<LocalNode> {
  const args = ['--host', '127.0.0.1', '--port', String(options.port), '--silent'];
  if (options.chainId !== undefined) args.push('--chain-id', String(options.chainId));
  if (options.blockTimeSeconds) args.push('--block-time', String(options.blockTimeSeconds));
  if (options.stateFile) args.push('--state', options.stateFile);
  const hadState = options.stateFile !== undefined && existsSync(options.stateFile);
  // Anvil's allocator (jemalloc) purges freed pages only when it is called again, so an idle node kept what
  // a state dump had freed (a node of 20,000 blocks, a minute after three dumps: 127 MB, and 89 with this),
  // and its resident memory moved by 10-20 MB through a soak's idle. A background thread purges them over
  // jemalloc's decay (10 s) instead. Every anvil started here gets it (the dev stack's and the tests'); a
  // setting of the caller's is kept.
  const env = {
    ...process.env,
    _RJEM_MALLOC_CONF: process.env._RJEM_MALLOC_CONF ?? 'background_thread:true',
  };
  const child = spawn(options.binary, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`anvil exited (${child.exitCode}): ${stderr.trim()}`);
    const up = await rpc(url)
      .getChainId()
      .then(
        () => true,
        () => false,
      );
    if (up) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`anvil did not answer on ${url} within 20 s: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  let saving: { stop(): Promise<void> } | undefined;
  if (options.stateFile) {
    // The chain anvil loaded from its state file is what the file holds: nothing to write until it moves.
    const loaded = hadState
      ? await rpc(url)
          .getBlockNumber({ cacheTime: 0 })
          .catch(async (error: unknown) => {
            await stopChild(child, exited, 5000);
            throw error;
          })
      : undefined;
    saving = keepStateOnChange(url, options.stateFile, options.stateIntervalMs ?? 2000, loaded);
  }
  return {
    url,
    pid: child.pid,
    async stop() {
      await saving?.stop();
      await stopChild(child, exited, 5000);
    },
  };
}

/** After a state write, the looks come at least this many times as long as the write took apart… */
const SAVE_SPACING = 100;
/** …and at most this far apart, whatever one slow write (a pause of the whole process) took. */
export const SAVE_WAIT_MAX_MS = 30_000;

/**
 * Writes anvil's state to `file` whenever its chain moved: every `intervalMs` it asks for the head, and
 * only when the head changed since the last write asks anvil for its state (`anvil_dumpState`: the gzipped
 * JSON its `--state` file holds) and writes it whole, then renames it into place; `stop` writes once more
 * if the head moved since. The dev stack changes state only through blocks (each transaction is mined into
 * one; it mines with `evm_mine`), so an idle node costs one small request every interval instead of its
 * whole state written (anvil's own `--state-interval` rewrote 13.8 MB every 2 s after a long soak, 2 % of
 * a core while idle). A change made without a block (`anvil_setBalance` and the like, typed by hand) is
 * written with the next block or the stop.
 *
 * Under load the chain moves at every look, and a write costs as much as the chain holds (anvil and this
 * process together, about 50 µs a transaction: 0.2 s at 4,000). So after a write the looks come at least
 * `SAVE_SPACING` times as long as the write took apart (at most `SAVE_WAIT_MAX_MS`): writing takes about
 * 1 % of the time however long the chain grows, where every look writing made each anvil's CPU per
 * transaction grow from 2 to 7 ms in a 30-minute soak (bench/README.md). A hard kill loses up to that
 * long of the chain (10 s at 0.1 s a write).
 */
export function keepStateOnChange(
  url: string,
  file: string,
  intervalMs: number,
  /** The head the file already holds, if it holds this chain. */
  saved?: bigint,
): { stop(): Promise<void> } {
  const client = rpc(url);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let wait = intervalMs;
  const save = async (always = false) => {
    const head = await client.getBlockNumber({ cacheTime: 0 });
    if (head === saved && !always) return;
    const began = performance.now();
    const partial = `${file}.${process.pid}.partial`;
    // A write cut short (anvil stopped while answering) leaves no partial file behind.
    await dumpState(url, partial).catch((error: unknown) => {
      rmSync(partial, { force: true });
      throw error;
    });
    renameSync(partial, file);
    saved = head;
    wait = Math.max(intervalMs, Math.min((performance.now() - began) * SAVE_SPACING, SAVE_WAIT_MAX_MS));
  };
  const loop = () => {
    if (stopped) return;
    running = save()
      // A node that did not answer (stopping, or busy) is asked again at the next interval.
      .catch(() => undefined)
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, wait);
      });
  };
  timer = setTimeout(loop, intervalMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      // Whatever changed since the last look, blocks or not (a node already gone, as after a Ctrl-C that
      // reached it too, answers nothing and the file keeps the last look's).
      await save(true).catch(() => undefined);
    },
  };
}

/**
 * Longest a state dump may take: a long chain's is tens of megabytes, written at once by anvil. A stop waits
 * for a write under way and then makes one more, so a hung anvil holds it up to twice this.
 */
const DUMP_TIMEOUT_MS = 60_000;
/** The size of the pieces the state is gunzipped and written in. */
const WRITE_CHUNK = 256 * 1024;
/** How far into anvil's answer its `result` must start: past it, the answer is an error or not JSON-RPC. */
const ANSWER_HEAD_MAX = 4096;

/**
 * Writes anvil's state (`anvil_dumpState`: hex of the gzipped JSON its `--state` file holds) to `file` as
 * the plain JSON, streamed from the answer through the hex decoding and the gunzip in chunks: this process
 * never holds the whole state, so its memory does not grow with the chain. Decoded whole, a write held
 * the hex text, its bytes and the JSON at once (10-14 MB of JSON after an hour's soak), and each larger
 * than the last as the chain grew.
 */
async function dumpState(url: string, file: string): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_dumpState', params: [] }),
    signal: AbortSignal.timeout(DUMP_TIMEOUT_MS),
  });
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new Error(`anvil_dumpState answered HTTP ${response.status}`);
  }
  const bytes = hexResult(response.body);
  // Its first two bytes say whether it is gzipped (anvil's own always is).
  let start = Buffer.alloc(0);
  for (let next; start.length < 2 && !(next = await bytes.next()).done;)
    start = Buffer.concat([start, next.value]);
  if (start.length === 0) throw new Error('anvil_dumpState answered an empty state');
  const all = (async function* () {
    yield start;
    yield* bytes;
  })();
  const gzipped = start[0] === 0x1f && start[1] === 0x8b;
  const out = createWriteStream(file, { highWaterMark: WRITE_CHUNK });
  await (gzipped ? pipeline(all, createGunzip({ chunkSize: WRITE_CHUNK }), out) : pipeline(all, out));
}

/** The bytes of a JSON-RPC answer's hex string `result`, decoded as its chunks arrive. */
async function* hexResult(body: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
  let head = '';
  let inResult = false;
  let carry = '';
  for await (const chunk of body) {
    let text = Buffer.from(chunk).toString('latin1');
    if (!inResult) {
      head += text;
      // The hex starts after the opening quote and its `0x`, which may come in the next chunk: wait for both.
      const start = /"result"\s*:\s*"/.exec(head);
      if (!start || head.length < start.index + start[0].length + 2) {
        if (head.length > ANSWER_HEAD_MAX) break;
        continue;
      }
      inResult = true;
      text = head.slice(start.index + start[0].length).replace(/^0x/, '');
    }
    const end = text.indexOf('"');
    const hex = carry + (end === -1 ? text : text.slice(0, end));
    // A chunk may end between the two digits of a byte: the odd one waits for the next chunk.
    const whole = hex.length - (hex.length % 2);
    carry = hex.slice(whole);
    if (whole > 0) {
      const bytes = Buffer.from(hex.slice(0, whole), 'hex');
      // Node stops at the first character that is not hex: a state cut short must not be written as whole.
      if (bytes.length !== whole / 2) throw new Error('anvil_dumpState answered a state that is not hex');
      yield bytes;
    }
    if (end !== -1) return;
  }
  throw new Error(
    inResult
      ? "anvil_dumpState's answer ended before its state did"
      : `anvil_dumpState answered no state: ${head.slice(0, 300)}`,
  );
}

/** What `paceChain` needs of a local chain, by block height. */
export interface PacedChain {
  head(): Promise<number>;
  /** Whether the block at `height` holds a payment. */
  busy(height: number): Promise<boolean>;
  /** Whether a transaction waits for a block (a chain that mines each transaction at once has none). */
  pending?(): Promise<boolean>;
  mine(): Promise<unknown>;
}

/**
 * Mines a block every `intervalMs` while a transaction waits or the chain has fewer than `depth` blocks
 * after its last block with a payment, and none otherwise: deposits get their confirmations at the pace of
 * a real chain, and an idle node keeps neither growing (anvil with a fixed block time adds a block, in
 * memory and in its state file, every interval: about 1 GB an hour at one a second). `busyAtStart` counts
 * the head at the first look as busy. A node that did not answer one look is asked again at the next.
 */
export function paceChain(
  chain: PacedChain,
  options: { depth: number; intervalMs: number; busyAtStart?: boolean },
): { stop(): void } {
  let seen: number | undefined;
  let lastBusy: number | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    const head = await chain.head();
    // Every block since the last look: a payment mined between two looks is not missed.
    for (let height = seen === undefined ? head : seen + 1; height <= head; height++) {
      if (await chain.busy(height)) lastBusy = height;
    }
    if (seen === undefined && options.busyAtStart) lastBusy ??= head;
    seen = head;
    const waiting = (await chain.pending?.()) ?? false;
    if (waiting || (lastBusy !== undefined && head - lastBusy < options.depth)) await chain.mine();
  };
  const loop = () => {
    if (stopped) return;
    void tick()
      .catch(() => undefined)
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, options.intervalMs);
      });
  };
  loop();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** `paceChain` for anvil, which mines each transaction at once: the depth after its block. */
export function paceBlocks(url: string, options: { depth: number; intervalMs: number }): { stop(): void } {
  const client = rpc(url);
  return paceChain(
    {
      head: async () => Number(await client.getBlockNumber({ cacheTime: 0 })),
      busy: async (height) => (await client.getBlockTransactionCount({ blockNumber: BigInt(height) })) > 0,
      mine: () => client.request({ method: 'evm_mine' as never, params: [] as never }),
    },
    { ...options, busyAtStart: true },
  );
}

const sourceFile = fromRoot('src', 'dev', 'chains', 'contracts', 'TestStablecoin.sol');

/** The stablecoin's ABI and bytecode, compiled with solc once per source and compiler, then cached. */
export async function compileStablecoin(cacheDir = join(homedir(), '.cache', 'payments')): Promise<{
  abi: Abi;
  bytecode: Hex;
}> {
  const source = readFileSync(sourceFile, 'utf8');
  const solc = (await import('solc')).default as {
    version(): string;
    compile(input: string): string;
  };
  const key = createHash('sha256').update(`${solc.version()}\n${source}`).digest('hex').slice(0, 16);
  const cached = join(cacheDir, 'contracts', `TestStablecoin-${key}.json`);
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8')) as { abi: Abi; bytecode: Hex };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'TestStablecoin.sol': { content: source } },
        settings: {
          optimizer: { enabled: true, runs: 200 },
          outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
        },
      }),
    ),
  ) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const contract = output.contracts['TestStablecoin.sol']!.TestStablecoin!;
  const compiled = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` as Hex };
  mkdirSync(dirname(cached), { recursive: true });
  writeFileSync(cached, JSON.stringify(compiled));
  return compiled;
}

const mintAbi = [
  {
    type: 'function',
    name: 'mint',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
    ],
    outputs: [],
  },
] as const;

export interface LocalChainSetUp {
  chainNodeId: string;
  tokens: Record<string, string>;
  confirmations: number;
  /** Where the network is watched: `url`, or the node someone registered elsewhere, which is kept. */
  rpcUrl: string;
  faucet: boolean;
}

/**
 * Makes the node at `url` ready for crypto on `network` in `mode`: deploys a stablecoin for every token
 * the catalogue offers there, registers the node with a fresh seed and anvil's customer account as the
 * test faucet, and funds the treasury (gas and tokens) and the faucet (tokens). A node already registered
 * is kept (a dev restart, or one an operator registered with `chains add`), unless it is at `url` and its
 * contracts are gone from the chain (the local chain was reset).
 */
export async function setUpLocalChain(
  db: Db,
  masterKey: string,
  options: { url: string; network?: string; mode?: Mode; confirmations: number; tokens?: string[] },
): Promise<LocalChainSetUp> {
  const network = options.network ?? 'ETHEREUM';
  const mode = options.mode ?? 'test';
  const client = rpc(options.url);
  const existing = await activeChainNode(db, masterKey, mode, network);
  if (existing) {
    const kept = {
      chainNodeId: existing.id,
      tokens: existing.tokens,
      confirmations: existing.confirmations,
      rpcUrl: existing.rpcUrl,
      faucet: existing.faucetKey !== undefined,
    };
    if (existing.rpcUrl !== options.url) return kept;
    const codes = await Promise.all(
      Object.values(existing.tokens).map((address) => client.getCode({ address: address as Address })),
    );
    if (codes.every((code) => code && code !== '0x')) return kept;
  }

  const deployer = privateKeyToAccount(ANVIL_KEYS.deployer);
  const customer = privateKeyToAccount(ANVIL_KEYS.customer);
  const wallet = createWalletClient({ account: deployer, transport: http(options.url) });
  const chainId = await client.getChainId();
  const chain = {
    id: chainId,
    name: 'local',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [options.url] } },
  };
  const { abi, bytecode } = await compileStablecoin();
  const tokens: Record<string, string> = {};
  for (const code of options.tokens ?? ['USDT']) {
    const asset = await findCryptoAsset(db, code, network);
    if (!asset) throw new Error(`the catalogue has no ${code} on ${network}`);
    const hash = await wallet.deployContract({
      abi,
      bytecode,
      args: [`Test ${code}`, code, asset.decimals],
      chain,
    });
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 100 });
    tokens[code] = receipt.contractAddress!;
  }
  const registered = await addChainNode(db, masterKey, {
    mode,
    network,
    rpcUrl: options.url,
    confirmations: options.confirmations,
    tokens,
    faucetKey: mode === 'test' ? ANVIL_KEYS.customer : undefined,
  });
  const treasury = familyOfNetwork(network)!.storedAddress(registered.treasury!) as Address;
  const sent: Hex[] = [await wallet.sendTransaction({ to: treasury, value: parseEther('100'), chain })];
  for (const [code, contract] of Object.entries(tokens)) {
    const asset = (await findCryptoAsset(db, code, network))!;
    const million = 1_000_000n * 10n ** BigInt(asset.decimals);
    for (const to of [treasury, customer.address]) {
      sent.push(
        await wallet.writeContract({
          address: contract as Address,
          abi: mintAbi,
          functionName: 'mint',
          args: [to, million],
          chain,
        }),
      );
    }
  }
  for (const hash of sent) await client.waitForTransactionReceipt({ hash, pollingInterval: 100 });
  return {
    chainNodeId: registered.id,
    tokens,
    confirmations: options.confirmations,
    rpcUrl: options.url,
    faucet: mode === 'test',
  };
}
