import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../src/db/client';
import { chainSends, depositAddresses, depositAddressIndex } from '../../src/db/schema/index';
import { activeChainNode, chainNodeById, type ChainNode } from '../../src/chain/nodes';
import { familyOf } from '../../src/chain/families';
import { nodeWatchesCurrency } from '../../src/coins/networks';
import type { ChainConnector, FiatPayouts } from './types';

/**
 * Crypto on the registered nodes of every family (src/chain: EVM networks, TRON, Bitcoin, Solana), for
 * the networks and modes that have one (`payments chains add`); the sandbox chain for every other network,
 * behind the same interface (its connector name in answers stays `evm-chain`, docs/api.md). A TRON node
 * watches token deposits only: TRX deposits, and sends and refunds on TRON, stay on the sandbox chain in test mode and are refused in live. A SOLANA node watches SPL tokens; refunds leave
 * from the deposit's token account, on-ramp sends from the treasury's (docs/connectors.md).
 */
export function nodeChains(
  db: Db,
  masterKey: string,
  sandbox: ChainConnector & FiatPayouts,
): ChainConnector & FiatPayouts {
  return {
    async depositAddress(request) {
      const node = nodeWatchesCurrency(request.network, request.currency)
        ? await activeChainNode(db, masterKey, request.mode, request.network)
        : undefined;
      if (!node) return sandbox.depositAddress(request);
      const mine = () =>
        db
          .select({ address: depositAddresses.address })
          .from(depositAddresses)
          .where(
            and(
              eq(depositAddresses.transactionId, request.transactionId),
              eq(depositAddresses.chainNodeId, node.id),
            ),
          );
      const [existing] = await mine();
      const family = familyOf(node);
      if (existing) return family.shownAddress(existing.address);
      // A fresh index from one sequence for every node: an index, so an address, is never handed out twice.
      const next = await db.execute<{ index: string }>(
        sql`select nextval(${sql.raw(`'${depositAddressIndex.seqName}'`)})::text as index`,
      );
      const hdIndex = Number(next.rows[0]!.index);
      await db
        .insert(depositAddresses)
        .values({
          address: family.depositAddress(node, hdIndex),
          chainNodeId: node.id,
          hdIndex,
          transactionId: request.transactionId,
        })
        .onConflictDoNothing({ target: [depositAddresses.transactionId, depositAddresses.chainNodeId] });
      const [opened] = await mine();
      return family.shownAddress(opened!.address);
    },

    async send(request) {
      // A retry asks the node its first attempt was signed on, whatever node is active now.
      const node =
        (await signedOn(db, masterKey, request.idempotencyKey)) ??
        (await depositNode(db, masterKey, request.transactionId)) ??
        (await activeChainNode(db, masterKey, request.mode, request.network));
      if (!node) return sandbox.send(request);
      const sent = await familyOf(node).send(db, node, request);
      return sent === 'sandbox' ? sandbox.send(request) : sent;
    },

    payout: (request) => sandbox.payout(request),
  };
}

/** The node a send with this key was signed on, when one was. */
async function signedOn(db: Db, masterKey: string, idempotencyKey: string): Promise<ChainNode | undefined> {
  const [row] = await db
    .select({ chainNodeId: chainSends.chainNodeId })
    .from(chainSends)
    .where(eq(chainSends.idempotencyKey, idempotencyKey))
    .limit(1);
  return row ? chainNodeById(db, masterKey, row.chainNodeId) : undefined;
}

/** The node a transaction's deposit address belongs to, when it has one. */
async function depositNode(db: Db, masterKey: string, transactionId: string): Promise<ChainNode | undefined> {
  const [row] = await db
    .select({ chainNodeId: depositAddresses.chainNodeId })
    .from(depositAddresses)
    .where(eq(depositAddresses.transactionId, transactionId));
  return row ? chainNodeById(db, masterKey, row.chainNodeId) : undefined;
}
