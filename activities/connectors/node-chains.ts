import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../src/db/client';
import { chainSends, depositAddresses, depositAddressIndex } from '../../src/db/schema/index';
import {
  activeChainNode,
  assetOnNode,
  chainNodeById,
  nodeAddress,
  shownAddress,
  type ChainNode,
} from '../../src/chain/nodes';
import { isDepositOnlyNetwork, nodeWatchesCurrency } from '../../src/coins/networks';
import { sendFromTreasury } from '../../src/chain/transfers';
import { sendFromDeposits } from '../../src/chain/bitcoin/spend';
import { sendOnSolana } from '../../src/chain/solana/send';
import { findCryptoAsset } from '../../src/coins/catalogue';
import { parseUnits } from '../../src/lib/units';
import type { ChainConnector, FiatPayouts } from './types';

/**
 * Crypto on the registered nodes of every family (src/chain: EVM networks, TRON, Bitcoin, Solana), for
 * the networks and modes that have one (`payments chains add`); the sandbox chain for every other network,
 * behind the same interface (its connector name in answers stays `evm-chain`, docs/api.md). A TRON node watches token deposits only: TRX deposits, and sends and refunds on TRON, stay on
 * the sandbox chain in test mode and are refused in live. A SOLANA node watches SPL tokens; refunds leave
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
      if (existing) return shownAddress(node.network, existing.address);
      // A fresh index from one sequence for every node: an index, so an address, is never handed out twice.
      const next = await db.execute<{ index: string }>(
        sql`select nextval(${sql.raw(`'${depositAddressIndex.seqName}'`)})::text as index`,
      );
      const hdIndex = Number(next.rows[0]!.index);
      await db
        .insert(depositAddresses)
        .values({
          address: node.depositAddress(hdIndex),
          chainNodeId: node.id,
          hdIndex,
          transactionId: request.transactionId,
        })
        .onConflictDoNothing({ target: [depositAddresses.transactionId, depositAddresses.chainNodeId] });
      const [opened] = await mine();
      return shownAddress(node.network, opened!.address);
    },

    async send(request) {
      // A retry asks the node its first attempt was signed on, whatever node is active now.
      const node =
        (await signedOn(db, masterKey, request.idempotencyKey)) ??
        (await depositNode(db, masterKey, request.transactionId)) ??
        (await activeChainNode(db, masterKey, request.mode, request.network));
      if (!node) return sandbox.send(request);
      if (node.bitcoin) {
        const units = parseUnits(request.amount, 8);
        if (units === undefined) throw new Error(`cannot send ${request.amount} BTC: not a valid amount`);
        const paidIn = await depositNode(db, masterKey, request.transactionId);
        // No treasury on Bitcoin: what is sent back spends the deposits. An on-ramp has none to spend.
        if (!paidIn) {
          if (request.mode === 'test') return sandbox.send(request);
          throw new Error(
            `cannot send ${request.amount} BTC for ${request.transactionId}: the service sends on ${node.network} only from a transaction's own deposits`,
          );
        }
        return sendFromDeposits(db, node, {
          idempotencyKey: request.idempotencyKey,
          transactionId: request.transactionId,
          to: request.address,
          units,
        });
      }
      if (node.solana) {
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
      if (isDepositOnlyNetwork(node.network)) {
        if (request.mode === 'test') return sandbox.send(request);
        // Not reached by refunds: live deposits there carry no sender to refund to, so they are held for
        // ops (src/chain/watcher.ts). An on-ramp send (live ramps need ALLOW_SANDBOX_IN_LIVE) stops here:
        // nothing was signed, and the activity retries with this message for ops, who send by hand.
        throw new Error(
          `cannot send ${request.amount} ${request.currency} on ${node.network}: the service watches ${node.network} for deposits only and does not sign its transactions`,
        );
      }
      const asset = assetOnNode(node, request.currency);
      const found = await findCryptoAsset(db, request.currency, request.network);
      const units = found ? parseUnits(request.amount, found.decimals) : undefined;
      const to = nodeAddress(node.network, request.address);
      if (!asset || units === undefined || !to) {
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
        to,
        units,
        asset,
      });
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
