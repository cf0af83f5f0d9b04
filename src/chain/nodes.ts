/** Chain nodes as the service keeps them: registered, opened with their secrets, retired. No family by name. */
import { randomBytes } from 'node:crypto';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { chainNodes } from '../db/schema/index';
import { decryptSecret, encryptSecret } from '../ciphers/secrets';
import type { Mode } from '../lib/vocabulary';
import { NODE_NETWORKS, type ChainFamilyName } from '../coins/networks';

export { isWatched } from '../coins/networks';

export interface ChainNode {
  id: string;
  mode: Mode;
  network: string;
  rpcUrl: string;
  confirmations: number;
  /** Asset code to contract address (or mint), as the family stores it. */
  tokens: Record<string, string>;
  /** The coin the watcher reads native transfers of; '' where it reads tokens only (TRON, Solana). */
  nativeCoin: string;
  /** The family that reads, keys and signs for the node (src/chain/families.ts). */
  family: ChainFamilyName;
  /** The node's HD seed, hex: its family derives the node's keys from it (its folder's keys.ts). */
  seedHex: string;
  /** The chain the node serves, where its family tells several apart (Bitcoin: main, test, regtest). */
  chainName: string | null;
  /** Test mode: the private key that pays test deposits, hex. */
  faucetKey?: string;
  scannedBlock: bigint | null;
  scannedHash: string | null;
  /** Where the addresses of closed transactions were read to, on a family that reads by address. */
  lateScannedBlock: bigint | null;
}

type NodeRow = typeof chainNodes.$inferSelect;

function open(row: NodeRow, masterKey: string): ChainNode {
  const network = NODE_NETWORKS[row.network];
  if (!network) throw new Error(`chain node ${row.id} watches ${row.network}, which no family serves`);
  return {
    id: row.id,
    mode: row.mode,
    network: row.network,
    rpcUrl: row.rpcUrl,
    confirmations: row.confirmations,
    tokens: row.tokens,
    nativeCoin: network.watchesNativeCoin ? network.nativeCoin : '',
    family: network.family,
    seedHex: decryptSecret(row.seedEnc, masterKey),
    chainName: row.chainName,
    ...(row.faucetKeyEnc ? { faucetKey: decryptSecret(row.faucetKeyEnc, masterKey) } : {}),
    scannedBlock: row.scannedBlock,
    scannedHash: row.scannedHash,
    lateScannedBlock: row.lateScannedBlock,
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

/** Every node registered, newest first, opened, with where it stands. */
export async function allChainNodes(db: Db, masterKey: string) {
  const rows = await db
    .select()
    .from(chainNodes)
    .orderBy(sql`${chainNodes.createdAt} desc`);
  return rows.map((row) => ({
    node: open(row, masterKey),
    state: row.retiredAt ? 'retired' : row.active ? 'active' : 'replaced (still watched)',
    watchedBy: row.leaseOwner,
  }));
}

/** The nodes the watcher reads: every node not retired, replaced ones included (their open addresses). */
export async function watchedChainNodeIds(db: Db): Promise<string[]> {
  const rows = await db.select({ id: chainNodes.id }).from(chainNodes).where(isNull(chainNodes.retiredAt));
  return rows.map((row) => row.id);
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
