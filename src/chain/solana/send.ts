import { and, eq, inArray, ne, sql } from 'drizzle-orm';
import {
  createKeyPairSignerFromPrivateKeyBytes,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  isSolanaError,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED,
  type Base64EncodedWireTransaction,
  type Signature,
} from '@solana/kit';
import type { Db } from '../../db/client';
import { chainSends, depositAddresses } from '../../db/schema/index';
import type { ChainNode } from '../nodes';
import type { ChainSend } from '../family';
import { findCryptoAsset } from '../../coins/catalogue';
import { parseUnits } from '../../lib/units';
import { signedTransaction, tokenPayment } from './instructions';
import { isSolanaAddress, solanaKeys } from './keys';
import { solanaRpc } from './rpc';
import { lastAttempt, nextSendNumber, TransferRejectedError } from '../sends';

/** How long one attempt waits to see its transaction land, inside the chain activities' 30 s timeout. */
const LANDING_WAIT_MS = 20_000;

export interface SolanaSend {
  idempotencyKey: string;
  transactionId: string;
  /** The recipient's wallet address (its associated token account is paid, opened if need be). */
  to: string;
  code: string;
  units: bigint;
  decimals: number;
}

/**
 * Sends `units` of a token at most once per `idempotencyKey`: from the transaction's deposit account when
 * it has one on this node (a refund), else from the treasury's (an on-ramp send); the treasury pays the
 * fee and opens the recipient's account if need be. The signed transaction is stored (`chain_sends`)
 * before it is broadcast, and a retry broadcasts the same bytes. A new attempt is signed only once the
 * last one certainly moved nothing: it failed in a finalized block, or the finalized chain proves it can
 * never land (`provenVoid`). A backend lagging behind the URL can only make the send wait. Answers the
 * signature once finalized.
 */
export async function sendOnSolana(
  db: Db,
  node: ChainNode,
  request: SolanaSend,
  options: { landingWaitMs?: number } = {},
): Promise<string> {
  for (;;) {
    const last = await lastAttempt(db, request.idempotencyKey);
    if (last && last.state === 'mined') return last.txHash;
    if (last && last.chainNodeId !== node.id) {
      // Another cluster's heights and blocks prove nothing about it.
      throw new Error(
        `send ${last.txHash} for ${request.idempotencyKey} was signed on node ${last.chainNodeId}, not ${node.id}: asked of its own node only`,
      );
    }
    if (last && (last.state === 'pending' || last.state === 'broadcast')) {
      const outcome = await settle(db, node, last, options.landingWaitMs ?? LANDING_WAIT_MS);
      if (outcome === 'landed') return last.txHash;
      if (outcome === 'changed') continue;
      if (outcome === 'waiting') {
        throw new Error(
          `send ${last.txHash} for ${request.idempotencyKey} is not final yet: asked again on the next try`,
        );
      }
      // 'void': it certainly moved nothing; a new attempt.
    }
    await signSolanaSend(db, node, request, (last?.attempt ?? 0) + 1);
  }
}

type Row = typeof chainSends.$inferSelect;
type Outcome = 'landed' | 'waiting' | 'void' | 'changed';

/** Moves a send still open (`pending`, `broadcast`) to `state`; false when another caller moved it first. */
async function move(
  db: Db,
  row: Row,
  state: 'broadcast' | 'mined' | 'reverted' | 'rejected',
): Promise<boolean> {
  const moved = await db
    .update(chainSends)
    .set({ state })
    .where(and(eq(chainSends.id, row.id), inArray(chainSends.state, ['pending', 'broadcast'])))
    .returning({ id: chainSends.id });
  return moved.length > 0;
}

/**
 * What became of a stored send, broadcasting it while it may still land: `landed` (recorded `mined`; one
 * that failed is recorded `reverted` and thrown), `void` (recorded `rejected`: it can never land),
 * `waiting` (not known yet: asked again later) or `changed` (another caller recorded it meanwhile).
 * A node's refusal never settles it: a copy sent earlier may still be on its way to a leader.
 */
async function settle(db: Db, node: ChainNode, row: Row, landingWaitMs: number): Promise<Outcome> {
  const client = solanaRpc(node.rpcUrl);
  const signature = row.txHash as Signature;
  const signedAt = row.contextSlot ?? 0n;
  /** Its status, from a node at `atLeast` or later; `behind` from one that is not there yet. */
  const look = async (atLeast: bigint) => {
    const { context, value } = await client
      .getSignatureStatuses([signature], { searchTransactionHistory: true })
      .send();
    return context.slot < atLeast ? ('behind' as const) : (value[0] ?? null);
  };
  const decide = async (status: Awaited<ReturnType<typeof look>>): Promise<Outcome | undefined> => {
    if (status === 'behind') return 'waiting';
    // Only a finalized block decides: a confirmed one may yet be rolled back.
    if (status && status.confirmationStatus === 'finalized') return record(db, row, status.err);
    return status ? 'waiting' : undefined;
  };
  const decided = await decide(await look(signedAt));
  if (decided) return decided;

  // No trace of it. Can it never land now?
  if (await provenVoid(node, row)) return (await move(db, row, 'rejected')) ? 'void' : 'changed';
  let refusal: string | undefined;
  // It may still land: recorded as sent before it is, so a crash in between never leaves a send that is out
  // but recorded as never sent.
  if (row.state === 'pending' && !(await move(db, row, 'broadcast'))) return 'changed';
  await client
    .sendTransaction(row.rawTransaction as Base64EncodedWireTransaction, {
      encoding: 'base64',
      preflightCommitment: 'confirmed',
    })
    .send()
    .catch((error: unknown) => {
      refusal = error instanceof Error ? error.message : String(error);
    });
  // A refused one is asked about once more, not waited for: the next try asks again.
  const until = refusal ? 0 : Date.now() + landingWaitMs;
  for (;;) {
    const known = await decide(await look(signedAt));
    if (known && known !== 'waiting') return known;
    if (Date.now() >= until) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  if (refusal) {
    throw new Error(
      `send ${row.txHash} was refused (${refusal}); a new attempt is signed only once it can no longer land`,
    );
  }
  return 'waiting';
}

/**
 * Whether the finalized chain proves a send can never land: the finalized block height is past the last
 * one that could hold it (its blockhash's last valid height, plus one: a leader checks a blockhash's age
 * against the parent block), and every finalized block after its signing slot up to that height is there
 * (heights contiguous, each the parent of the next) without its signature. Each of these answers is a
 * finalized block, the same from any backend behind the URL; one behind the signing, or missing blocks,
 * leaves it unproven, and a pruned block is an error for ops.
 */
async function provenVoid(node: ChainNode, row: Row): Promise<boolean> {
  if (row.contextSlot === null || row.validUntilHeight === null) return false;
  const client = solanaRpc(node.rpcUrl);
  const signedAt = row.contextSlot;
  const lastHeight = row.validUntilHeight + 1n;
  // Height and slot from one bank: a node that has finalized the signing slot.
  const info = await client
    .getEpochInfo({ commitment: 'finalized', minContextSlot: signedAt })
    .send()
    .catch((error: unknown) => {
      if (isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED))
        return undefined;
      throw error;
    });
  if (!info || info.blockHeight <= lastHeight) return false;
  let previous: { slot: bigint; height: bigint } | undefined;
  let start = signedAt + 1n;
  for (;;) {
    const slots = await client.getBlocksWithLimit(start, 200, { commitment: 'finalized' }).send();
    if (slots.length === 0) return false;
    for (const slot of slots) {
      const block = await client
        .getBlock(slot, {
          commitment: 'finalized',
          transactionDetails: 'signatures',
          rewards: false,
          maxSupportedTransactionVersion: 0,
        })
        .send()
        .catch((error: unknown) => {
          throw new Error(
            `cannot tell whether send ${row.txHash} landed: block ${slot} is not available from ${node.rpcUrl} (${error instanceof Error ? error.message : String(error)}); ask a node with history back to slot ${signedAt} (ops)`,
          );
        });
      if (!block || block.blockHeight === null) return false;
      // No finalized block left out: the first follows the signing slot, each the one before.
      const follows = previous
        ? block.parentSlot === previous.slot && block.blockHeight === previous.height + 1n
        : block.parentSlot <= signedAt;
      if (!follows) return false;
      if (block.signatures.includes(row.txHash as Signature)) return false;
      if (block.blockHeight >= lastHeight) return true;
      previous = { slot, height: block.blockHeight };
    }
    start = slots[slots.length - 1]! + 1n;
  }
}

/** Records a finalized send: `mined`, or `reverted` (it moved nothing) and thrown for the caller's retry. */
async function record(db: Db, row: Row, err: unknown): Promise<Outcome> {
  if (err !== null) {
    if (!(await move(db, row, 'reverted'))) return 'changed';
    throw new TransferRejectedError(`send ${row.txHash} failed on chain: ${JSON.stringify(err)}`);
  }
  return (await move(db, row, 'mined')) ? 'landed' : 'changed';
}

/** Signs attempt `attempt` of a send and stores it, unless another caller with the key signed first. */
export async function signSolanaSend(
  db: Db,
  node: ChainNode,
  request: SolanaSend,
  attempt: number,
): Promise<void> {
  const keys = solanaKeys(node);
  const mint = node.tokens[request.code];
  if (!mint) throw new TransferRejectedError(`node ${node.id} has no mint for ${request.code}`);
  if (!isSolanaAddress(request.to)) throw new TransferRejectedError(`${request.to} is not a Solana address`);
  const [deposit] = await db
    .select()
    .from(depositAddresses)
    .where(
      and(
        eq(depositAddresses.transactionId, request.transactionId),
        eq(depositAddresses.chainNodeId, node.id),
      ),
    );
  const treasury = await createKeyPairSignerFromPrivateKeyBytes(keys.treasuryKey());
  const owner = deposit
    ? await createKeyPairSignerFromPrivateKeyBytes(keys.depositKey(deposit.hdIndex))
    : treasury;
  const from = deposit ? deposit.address : keys.treasuryAddress();
  const { context, value: lifetime } = await solanaRpc(node.rpcUrl)
    .getLatestBlockhash({ commitment: 'confirmed' })
    .send();
  const signed = await signedTransaction(
    treasury,
    lifetime,
    await tokenPayment(treasury, owner, from, request.to, mint, request.units, request.decimals),
  );
  await db.transaction(async (tx) => {
    // One signer at a time per sending address: the nonce below is the next of that address.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`chain-send:${node.id}:${from}`}))`);
    // Another caller with this key signed while this one waited for the lock: its send is the one.
    const [taken] = await tx
      .select({ id: chainSends.id })
      .from(chainSends)
      .where(
        and(
          eq(chainSends.idempotencyKey, request.idempotencyKey),
          ne(chainSends.state, 'rejected'),
          ne(chainSends.state, 'reverted'),
        ),
      );
    if (taken) return;
    const next = await nextSendNumber(tx, node.id, from);
    await tx
      .insert(chainSends)
      .values({
        idempotencyKey: request.idempotencyKey,
        chainNodeId: node.id,
        attempt,
        fromAddress: from,
        nonce: next,
        rawTransaction: getBase64EncodedWireTransaction(signed),
        txHash: getSignatureFromTransaction(signed),
        contextSlot: context.slot,
        validUntilHeight: lifetime.lastValidBlockHeight,
      })
      .onConflictDoNothing({ target: [chainSends.idempotencyKey, chainSends.attempt] });
  });
}

/** The family's sender (src/chain/family.ts): an SPL token send of `request.amount`, signed once per key. */
export async function solanaSend(db: Db, node: ChainNode, request: ChainSend): Promise<string> {
  const found = await findCryptoAsset(db, request.currency, request.network);
  const units = found ? parseUnits(request.amount, found.decimals) : undefined;
  if (!found || units === undefined) {
    throw new Error(`cannot send ${request.amount} ${request.currency} on SOLANA: not a valid amount`);
  }
  return sendOnSolana(db, node, {
    idempotencyKey: request.idempotencyKey,
    transactionId: request.transactionId,
    to: request.address,
    code: request.currency,
    units,
    decimals: found.decimals,
  });
}
