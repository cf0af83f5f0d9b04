import { randomBytes } from 'node:crypto';
import { and, eq, isNull, sql } from 'drizzle-orm';
import {
  createPublicClient,
  http,
  isAddress,
  parseAbi,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Db } from '../db/client';
import { chainNodes } from '../db/schema/index';
import { decryptSecret, encryptSecret } from '../ciphers/secrets';
import type { Mode } from '../lib/vocabulary';
import { ChainKeys } from './keys';
import { EVM_NATIVE_COINS, SOLANA_NETWORKS, UTXO_NETWORKS } from '../coins/networks';
import { fromTronAddress, toTronAddress } from './tron-address';
import { BitcoinKeys, type BitcoinChain } from './bitcoin/keys';
import { withoutCredentials } from '../lib/urls';
import { SolanaKeys } from './solana/keys';

export { EVM_NATIVE_COINS, isWatched } from '../coins/networks';

/** BIP-44 coin type of a network's keys: TRON's own, Ethereum's for every EVM network. */
/** The SLIP-44 coin type an EVM-family node derives its keys with (TRON's own, else Ethereum's). */
export const coinTypeOf = (network: string) => (network === 'TRON' ? 195 : 60);

/** An address as a merchant or customer sees it on `network`: TRON's T-address, else the hex. */
export function shownAddress(network: string, hex: string): string {
  return network === 'TRON' ? toTronAddress(hex) : hex;
}

/** An address given for `network` (a T-address on TRON) as the lower-case hex the node speaks. */
export function nodeAddress(network: string, address: string): Address | undefined {
  if (UTXO_NETWORKS[network] || SOLANA_NETWORKS[network]) return undefined;
  if (network === 'TRON') return fromTronAddress(address);
  return isAddress(address) ? (address.toLowerCase() as Address) : undefined;
}

export const erc20Abi = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
  'function decimals() view returns (uint8)',
]);

export interface ChainNode {
  id: string;
  mode: Mode;
  network: string;
  rpcUrl: string;
  confirmations: number;
  /** Asset code to contract address, lower-case. */
  tokens: Record<string, string>;
  /** The coin the watcher reads native transfers of; '' where it reads tokens only (TRON). */
  nativeCoin: string;
  /** How the node is read: Ethereum's JSON-RPC (EVM networks, TRON's logs), Bitcoin's or Solana's. */
  family: 'evm' | 'bitcoin' | 'solana';
  keys: ChainKeys;
  /** A Bitcoin node's keys (native segwit, on the chain it serves). */
  bitcoin?: BitcoinKeys;
  /** A Solana node's keys (ed25519, SLIP-0010). */
  solana?: SolanaKeys;
  /** The address deposit index `index` gives on this node, as stored (lower-case hex, or the node's own form). */
  depositAddress(index: number): string;
  faucet?: PrivateKeyAccount;
  /** Test mode on Bitcoin: the private key its blocks are mined to, which pays test deposits. */
  bitcoinFaucet?: Uint8Array;
  /** Test mode on Solana: the ed25519 private key whose token accounts pay test deposits. */
  solanaFaucet?: Uint8Array;
  scannedBlock: bigint | null;
  scannedHash: string | null;
}

type NodeRow = typeof chainNodes.$inferSelect;

function open(row: NodeRow, masterKey: string): ChainNode {
  const seed = decryptSecret(row.seedEnc, masterKey);
  const faucetKey = row.faucetKeyEnc ? decryptSecret(row.faucetKeyEnc, masterKey) : undefined;
  const utxo = UTXO_NETWORKS[row.network];
  const solana = SOLANA_NETWORKS[row.network] ? new SolanaKeys(seed) : undefined;
  const bitcoin = utxo ? new BitcoinKeys(seed, (row.chainName ?? 'main') as BitcoinChain) : undefined;
  const keys = new ChainKeys(seed, coinTypeOf(row.network));
  const faucetBytes = faucetKey ? Buffer.from(faucetKey.replace(/^0x/, ''), 'hex') : undefined;
  return {
    id: row.id,
    mode: row.mode,
    network: row.network,
    rpcUrl: row.rpcUrl,
    confirmations: row.confirmations,
    tokens: row.tokens,
    nativeCoin: EVM_NATIVE_COINS[row.network] ?? utxo?.nativeCoin ?? '',
    family: utxo ? 'bitcoin' : solana ? 'solana' : 'evm',
    keys,
    ...(bitcoin ? { bitcoin } : {}),
    ...(solana ? { solana } : {}),
    depositAddress: (index) => (bitcoin ?? solana ?? keys).depositAddress(index),
    ...(faucetBytes && utxo ? { bitcoinFaucet: faucetBytes } : {}),
    ...(faucetBytes && solana ? { solanaFaucet: faucetBytes } : {}),
    faucet: faucetKey && !utxo && !solana ? privateKeyToAccount(faucetKey as Hex) : undefined,
    scannedBlock: row.scannedBlock,
    scannedHash: row.scannedHash,
  };
}

/** The node watching `network` for `mode`, when there is one; the sandbox chain serves the rest. */
export async function activeChainNode(
  db: Db,
  masterKey: string,
  mode: Mode,
  network: string,
): Promise<ChainNode | undefined> {
  const [row] = await db
    .select()
    .from(chainNodes)
    .where(and(eq(chainNodes.mode, mode), eq(chainNodes.network, network), eq(chainNodes.active, true)));
  return row ? open(row, masterKey) : undefined;
}

export async function chainNodeById(db: Db, masterKey: string, id: string): Promise<ChainNode | undefined> {
  const [row] = await db.select().from(chainNodes).where(eq(chainNodes.id, id));
  return row ? open(row, masterKey) : undefined;
}

/** The nodes the watcher reads: every node not retired, replaced ones included (their open addresses). */
export async function watchedChainNodeIds(db: Db): Promise<string[]> {
  const rows = await db.select({ id: chainNodes.id }).from(chainNodes).where(isNull(chainNodes.retiredAt));
  return rows.map((row) => row.id);
}

/** The asset a node moves for `code`: its ERC-20 contract, or `native` for the network's own coin. */
export function assetOnNode(node: ChainNode, code: string): Address | 'native' | undefined {
  if (code === node.nativeCoin) return 'native';
  const contract = node.tokens[code];
  return contract ? (contract as Address) : undefined;
}

const clients = new Map<string, PublicClient>();

/** One JSON-RPC client per node URL and process. */
export function rpc(url: string): PublicClient {
  let client = clients.get(url);
  if (!client) {
    client = createPublicClient({ transport: http(url, { retryCount: 1, timeout: 10_000 }) });
    clients.set(url, client);
  }
  return client;
}

export class ChainNodeError extends Error {}

export interface ChainNodeSpec {
  mode: Mode;
  network: string;
  rpcUrl: string;
  confirmations: number;
  tokens: Record<string, string>;
  /** Hex HD seed; a fresh random one when absent. */
  seedHex?: string;
  /** Test mode only: a funded private key for the test deposit helper. */
  faucetKey?: string;
}

/** Records a registered node as the active one of its network and mode (the one before it retired). */
export async function insertNode(
  db: Db,
  masterKey: string,
  spec: ChainNodeSpec,
  values: {
    seedHex: string;
    tokens: Record<string, string>;
    watchingFrom: bigint;
    tipHash: string;
    chainName: string | null;
  },
): Promise<string> {
  const { seedHex, tokens, watchingFrom } = values;
  const id = `chain_${randomBytes(8).toString('hex')}`;
  await db.transaction(async (tx) => {
    await tx
      .update(chainNodes)
      .set({ active: false })
      .where(
        and(
          eq(chainNodes.mode, spec.mode),
          eq(chainNodes.network, spec.network),
          eq(chainNodes.active, true),
        ),
      );
    await tx.insert(chainNodes).values({
      id,
      mode: spec.mode,
      network: spec.network,
      rpcUrl: spec.rpcUrl,
      confirmations: spec.confirmations,
      tokens,
      seedEnc: encryptSecret(seedHex, masterKey),
      faucetKeyEnc: spec.faucetKey ? encryptSecret(spec.faucetKey, masterKey) : null,
      scannedBlock: watchingFrom,
      scannedHash: values.tipHash,
      chainName: values.chainName,
    });
  });
  return id;
}

export type RetireOutcome =
  | { kind: 'retired' }
  | { kind: 'unknown' }
  /** Refused without `force`: what retiring would leave unwatched. */
  | { kind: 'refused'; reason: string };

/**
 * Stops watching a node at all: no new addresses, no more scans, its lease let go. Deposits to its
 * addresses after this are not seen, so it is refused while the node is the active one of its network
 * (new payins would fall back to the sandbox chain) or while transactions with its addresses are still
 * open, unless `force`.
 */
export async function retireChainNode(db: Db, id: string, force = false): Promise<RetireOutcome> {
  const [node] = await db
    .select()
    .from(chainNodes)
    .where(and(eq(chainNodes.id, id), isNull(chainNodes.retiredAt)));
  if (!node) return { kind: 'unknown' };
  if (!force) {
    if (node.active) {
      return {
        kind: 'refused',
        reason: `${id} is the active node for ${node.mode} ${node.network}: register its replacement first (new payins would fall back to the sandbox chain), or --force.`,
      };
    }
    const open = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from deposit_addresses a join transactions t on t.id = a.transaction_id
      where a.chain_node_id = ${id} and t.status not in ('SUCCESS', 'FAILED', 'BLOCKED')`);
    const n = open.rows[0]?.n ?? 0;
    if (n > 0) {
      return {
        kind: 'refused',
        reason: `${n} open transaction(s) still take deposits on ${id}'s addresses: retire it once they have closed, or --force.`,
      };
    }
  }
  await db
    .update(chainNodes)
    .set({ active: false, retiredAt: sql`now()`, leaseOwner: null, leaseUntil: null })
    .where(eq(chainNodes.id, id));
  return { kind: 'retired' };
}

/** Retires the nodes at `rpcUrl` (a dev chain that is not running this time: nothing can arrive there). */
export async function retireChainNodesAt(db: Db, rpcUrl: string): Promise<void> {
  await db
    .update(chainNodes)
    .set({
      active: false,
      retiredAt: sql`coalesce(${chainNodes.retiredAt}, now())`,
      leaseOwner: null,
      leaseUntil: null,
    })
    .where(eq(chainNodes.rpcUrl, rpcUrl));
}

/** The address ops fund for a node's sends, as shown; none on Bitcoin (a refund spends the deposit). */
function treasuryOf(node: ChainNode): string | null {
  if (node.bitcoin) return null;
  if (node.solana) return node.solana.treasuryAddress();
  return shownAddress(node.network, node.keys.treasury().address);
}

/** Nodes as ops see them: the treasury to fund, where the watcher is; no secrets. */
export async function listChainNodes(db: Db, masterKey: string) {
  const rows = await db
    .select()
    .from(chainNodes)
    .orderBy(sql`${chainNodes.createdAt} desc`);
  return rows.map((row) => ({
    chain_node_id: row.id,
    mode: row.mode,
    network: row.network,
    rpc_url: withoutCredentials(row.rpcUrl),
    confirmations: row.confirmations,
    tokens: Object.fromEntries(
      Object.entries(row.tokens).map(([code, contract]) => [code, shownAddress(row.network, contract)]),
    ),
    treasury: treasuryOf(open(row, masterKey)),
    test_faucet: row.faucetKeyEnc !== null,
    state: row.retiredAt ? 'retired' : row.active ? 'active' : 'replaced (still watched)',
    scanned_block: row.scannedBlock?.toString() ?? null,
    watched_by: row.leaseOwner,
  }));
}
