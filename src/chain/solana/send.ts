import { and, desc, eq, ne, sql } from 'drizzle-orm';
import {
  address,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromPrivateKeyBytes,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getCompiledTransactionMessageDecoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Base64EncodedWireTransaction,
  type Blockhash,
  type Signature,
} from '@solana/kit';
import type { Db } from '../../db/client';
import { chainSends, depositAddresses } from '../../db/schema/index';
import type { ChainNode } from '../nodes';
import { TransferRejectedError } from '../transfers';
import { createAssociatedTokenAccountIdempotent, transferChecked } from './faucet';
import { isSolanaAddress } from './keys';
import { associatedTokenAccount } from './reader';
import { solanaRpc } from './rpc';

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
 * last one certainly moved nothing: it landed and failed, or its blockhash expired with no trace of it on
 * chain (a Solana transaction can never land after that).
 * Answers the signature once it has landed.
 */
export async function sendOnSolana(db: Db, node: ChainNode, request: SolanaSend): Promise<string> {
  for (;;) {
    const [last] = await db
      .select()
      .from(chainSends)
      .where(eq(chainSends.idempotencyKey, request.idempotencyKey))
      .orderBy(desc(chainSends.attempt))
      .limit(1);
    if (last && last.state === 'mined') return last.txHash;
    if (last && (last.state === 'pending' || last.state === 'broadcast')) {
      const outcome = await settle(db, node, last);
      if (outcome === 'landed') return last.txHash;
      if (outcome === 'waiting') {
        throw new Error(
          `send ${last.txHash} for ${request.idempotencyKey} has not landed yet: asked again on the next try`,
        );
      }
      // Certainly moved nothing: a new attempt.
    }
    await signSolanaSend(db, node, request, (last?.attempt ?? 0) + 1);
  }
}

/**
 * What became of a stored send: `landed` (recorded `mined`; one that landed and failed is recorded
 * `reverted` and thrown), `waiting` (unknown yet: asked again later), or `void` (recorded `rejected`: its
 * blockhash expired with no trace of it, so it can never land). Broadcasts it while it may still land.
 * A node's refusal never settles it: a copy sent earlier may still be on its way to a leader, so only the
 * blockhash's expiry (about a minute on mainnet) frees the way for a new attempt.
 */
async function settle(
  db: Db,
  node: ChainNode,
  row: typeof chainSends.$inferSelect,
): Promise<'landed' | 'waiting' | 'void'> {
  const client = solanaRpc(node.rpcUrl);
  const signature = row.txHash as Signature;
  let refusal: string | undefined;
  /** Any trace of it (`processed` included), and whether it counts as landed. */
  const look = async () => {
    const { value } = await client
      .getSignatureStatuses([signature], { searchTransactionHistory: true })
      .send();
    const status = value[0] ?? undefined;
    return { status, landed: status && status.confirmationStatus !== 'processed' ? status : undefined };
  };
  let seen = await look();
  if (seen.landed) return record(db, row, seen.landed.err);
  if (!seen.status) {
    const bytes = row.rawTransaction as Base64EncodedWireTransaction;
    const message = getCompiledTransactionMessageDecoder().decode(
      getTransactionDecoder().decode(Buffer.from(bytes, 'base64')).messageBytes,
    );
    const { value: valid } = await client
      .isBlockhashValid(message.lifetimeToken as Blockhash, { commitment: 'confirmed' })
      .send();
    if (!valid) {
      // Expired: it can never land now. Asked once more, in case it landed just before.
      seen = await look();
      if (seen.landed) return record(db, row, seen.landed.err);
      if (!seen.status) {
        await db.update(chainSends).set({ state: 'rejected' }).where(eq(chainSends.id, row.id));
        return 'void';
      }
    } else {
      // Recorded as sent before it is: a crash in between leaves a send that may be out, never one that
      // is and is not recorded so.
      if (row.state === 'pending') {
        await db.update(chainSends).set({ state: 'broadcast' }).where(eq(chainSends.id, row.id));
      }
      await client
        .sendTransaction(bytes, { encoding: 'base64', preflightCommitment: 'confirmed' })
        .send()
        .catch((error: unknown) => {
          // Refused (or already taken): what it became is asked below, and its expiry settles it.
          refusal = error instanceof Error ? error.message : String(error);
        });
    }
  }
  // A refused one is asked about once more, not waited for: the next try asks again.
  const until = refusal ? 0 : Date.now() + LANDING_WAIT_MS;
  if (refusal) seen = await look();
  while (!seen.landed && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    seen = await look();
  }
  if (seen.landed) return record(db, row, seen.landed.err);
  if (refusal) {
    throw new Error(
      `send ${row.txHash} was refused (${refusal}); a new attempt is signed once its blockhash has expired`,
    );
  }
  return 'waiting';
}

async function record(db: Db, row: typeof chainSends.$inferSelect, err: unknown): Promise<'landed'> {
  if (err !== null) {
    // Landed and failed: it moved nothing.
    await db.update(chainSends).set({ state: 'reverted' }).where(eq(chainSends.id, row.id));
    throw new TransferRejectedError(`send ${row.txHash} failed on chain: ${JSON.stringify(err)}`);
  }
  await db.update(chainSends).set({ state: 'mined' }).where(eq(chainSends.id, row.id));
  return 'landed';
}

/** Signs attempt `attempt` of a send and stores it, unless another caller with the key signed first. */
export async function signSolanaSend(
  db: Db,
  node: ChainNode,
  request: SolanaSend,
  attempt: number,
): Promise<void> {
  const keys = node.solana!;
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
  const source = await associatedTokenAccount(from, mint);
  const destination = await associatedTokenAccount(request.to, mint);
  const { value: lifetime } = await solanaRpc(node.rpcUrl)
    .getLatestBlockhash({ commitment: 'confirmed' })
    .send();
  const signed = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(treasury, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) =>
        appendTransactionMessageInstructions(
          [
            createAssociatedTokenAccountIdempotent(treasury, destination, address(request.to), address(mint)),
            transferChecked(source, address(mint), destination, owner, request.units, request.decimals),
          ],
          m,
        ),
    ),
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
    const [{ next }] = (
      await tx.execute<{ next: number }>(sql`
        select coalesce(max(${chainSends.nonce}), -1)::int + 1 as next from ${chainSends}
        where ${chainSends.chainNodeId} = ${node.id} and ${chainSends.fromAddress} = ${from}`)
    ).rows as [{ next: number }];
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
      })
      .onConflictDoNothing({ target: [chainSends.idempotencyKey, chainSends.attempt] });
  });
}
