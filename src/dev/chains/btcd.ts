/**
 * A local Bitcoin node for the tests and `npm run dev`: btcd on regtest (built from the Go module proxy and
 * cached by scripts/toolchain.mjs), its blocks mined to the test faucet's key, registered for test mode.
 * Never used in production; there a node is registered with `payments chains add` (docs/connectors.md).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getAddress } from '@scure/btc-signer';
import type { Db } from '../../db/client';
import { activeChainNode, retireChainNodesAt, type ChainNode } from '../../chain/nodes';
import { addChainNode } from '../../chain/registration';
import { paceChain, type LocalNode } from './anvil';
import { BitcoinKeys } from '../../chain/bitcoin/keys';
import { bitcoinRpc } from '../../chain/bitcoin/rpc';
import { stopChild } from '../child';

/** The regtest faucet's private key: public knowledge, like anvil's test accounts; regtest coins only. */
export const REGTEST_FAUCET_KEY = 'd1f1b3c3a0a4e0b5f6a7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3';

const regtestAddress = (key: string) =>
  getAddress('wpkh', Buffer.from(key, 'hex'), new BitcoinKeys('00'.repeat(16), 'regtest').network);

/** Starts btcd on regtest on loopback, `dataDir` keeping its chain; blocks come only when asked for. */
export async function startBtcd(options: {
  binary: string;
  port: number;
  dataDir: string;
  /** The RPC password: dev keeps one across restarts, so the registered URL stays valid; else a fresh one. */
  password?: string;
}): Promise<LocalNode> {
  mkdirSync(options.dataDir, { recursive: true });
  const password = options.password ?? randomBytes(12).toString('hex');
  const configFile = join(options.dataDir, 'btcd.conf');
  writeFileSync(configFile, `[Application Options]\nrpcuser=payments\nrpcpass=${password}\n`, {
    mode: 0o600,
  });
  const args = [
    '--regtest',
    `--datadir=${join(options.dataDir, 'data')}`,
    `--logdir=${join(options.dataDir, 'logs')}`,
    '--notls',
    // The RPC password in a file only this user reads, not on the command line `ps` shows.
    `--configfile=${configFile}`,
    `--rpclisten=127.0.0.1:${options.port}`,
    '--nolisten',
    '--txindex',
    `--miningaddr=${regtestAddress(REGTEST_FAUCET_KEY)}`,
  ];
  const child = spawn(options.binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://payments:${password}@127.0.0.1:${options.port}`;
  const client = bitcoinRpc(url, 2_000);
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`btcd exited (${child.exitCode}): ${stderr.trim()}`);
    if (
      await client.call<number>('getblockcount').then(
        () => true,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`btcd did not answer on port ${options.port} within 30 s: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid,
    stop: () => stopChild(child, exited, 10_000),
  };
}

/**
 * Makes the regtest node at `url` ready for test-mode BITCOIN: registers it with a fresh seed and the
 * regtest faucet, and mines past coinbase maturity so the faucet has coins (each test deposit spends one
 * coinbase). A test BITCOIN node already registered is kept.
 */
export async function setUpLocalBitcoin(
  db: Db,
  masterKey: string,
  options: { url: string; confirmations: number; coins?: number },
): Promise<{ chainNodeId: string; confirmations: number; rpcUrl: string }> {
  const client = bitcoinRpc(options.url);
  const height = await client.call<number>('getblockcount');
  const wanted = 100 + (options.coins ?? 100);
  if (height < wanted) await client.call<string[]>('generate', [wanted - height]);
  // A node already registered is kept: one an operator registered with `chains add` (this node then runs
  // unused), or this one from an earlier start while it still holds the chain that start read. btcd starts
  // regtest afresh each time, so an earlier start's node is usually retired here: its cursor and
  // addresses belong to a chain that is gone.
  const existing = await activeChainNode(db, masterKey, 'test', 'BITCOIN');
  if (existing && (existing.rpcUrl !== options.url || (await holdsChainRead(client, existing)))) {
    return { chainNodeId: existing.id, confirmations: existing.confirmations, rpcUrl: existing.rpcUrl };
  }
  await retireChainNodesAt(db, options.url);
  const registered = await addChainNode(db, masterKey, {
    mode: 'test',
    network: 'BITCOIN',
    rpcUrl: options.url,
    confirmations: options.confirmations,
    tokens: {},
    faucetKey: REGTEST_FAUCET_KEY,
  });
  return { chainNodeId: registered.id, confirmations: options.confirmations, rpcUrl: options.url };
}

/** Whether the node still holds the block the watcher read last, as it read it. */
async function holdsChainRead(client: ReturnType<typeof bitcoinRpc>, node: ChainNode): Promise<boolean> {
  if (node.scannedBlock === null || !node.scannedHash) return true;
  const height = BigInt(await client.call<number>('getblockcount'));
  if (node.scannedBlock > height) return false;
  return (await client.call<string>('getblockhash', [Number(node.scannedBlock)])) === node.scannedHash;
}

/**
 * The dev node's blocks: one every `intervalMs` while a transaction waits in the pool or has fewer than
 * `depth` blocks on it, none otherwise (`paceChain`), so an idle chain stays its size.
 */
export function paceBitcoinBlocks(
  url: string,
  options: { depth: number; intervalMs: number },
): { stop(): void } {
  const client = bitcoinRpc(url);
  return paceChain(
    {
      head: () => client.call<number>('getblockcount'),
      // More than the coinbase: a block with a payment in it.
      busy: async (height) => {
        const hash = await client.call<string>('getblockhash', [height]);
        return (await client.call<{ tx: string[] }>('getblock', [hash, 1])).tx.length > 1;
      },
      pending: async () => (await client.call<string[]>('getrawmempool')).length > 0,
      mine: () => client.call<string[]>('generate', [1]),
    },
    options,
  );
}
