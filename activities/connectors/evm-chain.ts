import { and, eq, sql } from 'drizzle-orm';
import { isAddress, type Address } from 'viem';
import type { Db } from '../../src/db/client';
import { depositAddresses, depositAddressIndex } from '../../src/db/schema/index';
import { activeChainNode, assetOnNode, chainNodeById, type ChainNode } from '../../src/chain/nodes';
import { sendFromTreasury } from '../../src/chain/transfers';
import { findCryptoAsset } from '../../src/crypto/catalogue';
import { parseUnits } from '../../src/lib/units';
import type { ChainConnector, FiatPayouts } from './types';

/**
 * Crypto on real EVM nodes (src/chain), for the networks and modes that have one registered
 * (`payments chains add`); the sandbox chain for every other network, behind the same interface.
 */
export function evmChain(
  db: Db,
  masterKey: string,
  sandbox: ChainConnector & FiatPayouts,
): ChainConnector & FiatPayouts {
  return {
    async depositAddress(request) {
      const node = await activeChainNode(db, masterKey, request.mode, request.network);
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
      if (existing) return existing.address;
      // A fresh index from one sequence for every node: an index, so an address, is never handed out twice.
      const next = await db.execute<{ index: string }>(
        sql`select nextval(${sql.raw(`'${depositAddressIndex.seqName}'`)})::text as index`,
      );
      const hdIndex = Number(next.rows[0]!.index);
      await db
        .insert(depositAddresses)
        .values({
          address: node.keys.depositAddress(hdIndex),
          chainNodeId: node.id,
          hdIndex,
          transactionId: request.transactionId,
        })
        .onConflictDoNothing({ target: [depositAddresses.transactionId, depositAddresses.chainNodeId] });
      const [opened] = await mine();
      return opened!.address;
    },

    async send(request) {
      const node =
        (await depositNode(db, masterKey, request.transactionId)) ??
        (await activeChainNode(db, masterKey, request.mode, request.network));
      if (!node) return sandbox.send(request);
      const asset = assetOnNode(node, request.currency);
      const found = await findCryptoAsset(db, request.currency, request.network);
      const units = found ? parseUnits(request.amount, found.decimals) : undefined;
      if (!asset || units === undefined || !isAddress(request.address)) {
        // Nothing was signed. The activity stays retrying with this message, for ops, until the node's
        // registration is mended (a token contract missing) or the transaction is cancelled.
        throw new Error(
          `cannot send ${request.amount} ${request.currency} to ${request.address} on ${node.network}: ${
            !asset
              ? `node ${node.id} has no contract for ${request.currency}`
              : 'not a valid amount or address'
          }`,
        );
      }
      return sendFromTreasury(db, node, request.idempotencyKey, {
        to: request.address as Address,
        units,
        asset,
      });
    },

    payout: (request) => sandbox.payout(request),
  };
}

/** The node a transaction's deposit address belongs to, when it has one. */
async function depositNode(db: Db, masterKey: string, transactionId: string): Promise<ChainNode | undefined> {
  const [row] = await db
    .select({ chainNodeId: depositAddresses.chainNodeId })
    .from(depositAddresses)
    .where(eq(depositAddresses.transactionId, transactionId));
  return row ? chainNodeById(db, masterKey, row.chainNodeId) : undefined;
}
