import pino from 'pino';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { freePort } from '../../src/dev/postgres';
import {
  ANVIL_KEYS,
  anvilBinary,
  setUpLocalChain,
  startAnvil,
  type LocalNode,
} from '../../src/dev/chains/anvil';
import { chainNodeById } from '../../src/chain/nodes';
import { erc20Abi, rpc } from '../../src/chain/evm/rpc';
import { handOverDeposits, scanNode, startChainWatcher } from '../../src/chain/watcher';
import { createWorkerMetrics, type WorkerMetrics } from '../../src/platform/metrics';
import type { TestEnv } from './env';

export interface LocalChain {
  node: LocalNode;
  chainNodeId: string;
  tokens: Record<string, string>;
  confirmations: number;
  /** The test faucet (anvil's customer account): where test deposits come from and refunds go back to. */
  customer: Address;
  mine(blocks: number): Promise<void>;
  head(): Promise<bigint>;
  /**
   * One scan of everything deep enough now and the hand-over of what it found, run to their end (the
   * background watcher runs as well).
   */
  scan(): Promise<void>;
  /** The background watcher's metrics, each pass over the node timed there (none with `watch: false`). */
  metrics: WorkerMetrics;
  snapshot(): Promise<Hex>;
  revert(id: Hex): Promise<void>;
  tokenBalance(code: string, owner: string): Promise<bigint>;
  close(): Promise<void>;
}

/**
 * A local anvil for one test file: every transaction mined at once in its own block, more blocks mined by
 * the test (`mine`); the stablecoin deployed, the node registered for test mode on `network` (ETHEREUM
 * unless given, answering `chainId`), and the chain watcher polling it for the test environment's
 * workflows. `watch: false` leaves the polling to the caller (one watcher serves every node).
 */
export async function startLocalChain(
  env: TestEnv,
  confirmations: number,
  options: { network?: string; chainId?: number; watch?: boolean } = {},
): Promise<LocalChain> {
  const binary = anvilBinary();
  if (!binary) throw new Error('anvil is not installed (optional dependency @foundry-rs/anvil-linux-amd64)');
  const node = await startAnvil({ binary, port: await freePort(), chainId: options.chainId });
  const { db } = env.database;
  const set = await setUpLocalChain(db, env.config.MASTER_KEY, {
    url: node.url,
    confirmations,
    network: options.network,
  });
  // Scan failures show in the test output; deposits seen are asserted through the API instead.
  const log = pino({ level: 'warn' });
  const metrics = createWorkerMetrics();
  const watcher =
    options.watch === false
      ? undefined
      : startChainWatcher({
          db,
          temporal: env.client,
          masterKey: env.config.MASTER_KEY,
          log,
          pollMs: 100,
          metrics,
        });
  const client = rpc(node.url);
  const request = (method: string, params: unknown[]) =>
    client.request({ method: method as never, params: params as never });
  return {
    node,
    ...set,
    confirmations,
    metrics,
    customer: privateKeyToAccount(ANVIL_KEYS.customer).address,
    async mine(blocks) {
      await request('anvil_mine', [`0x${blocks.toString(16)}`]);
    },
    head: () => client.getBlockNumber({ cacheTime: 0 }),
    async scan() {
      const node = await chainNodeById(db, env.config.MASTER_KEY, set.chainNodeId);
      await scanNode({ db, temporal: env.client, log }, node!);
      await handOverDeposits({ db, temporal: env.client, log }, node!);
    },
    snapshot: async () => (await request('evm_snapshot', [])) as Hex,
    async revert(id) {
      await request('evm_revert', [id]);
    },
    tokenBalance: (code, owner) =>
      client.readContract({
        address: set.tokens[code] as Address,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [owner as Address],
      }),
    async close() {
      await watcher?.stop();
      await node.stop();
    },
  };
}
