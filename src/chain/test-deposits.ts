import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Address } from 'viem';
import type { Db } from '../db/client';
import { depositAddresses } from '../db/schema/index';
import { findCryptoAsset } from '../crypto/catalogue';
import { parseUnits } from '../lib/units';
import { activeChainNode, assetOnNode, chainNodeById } from './nodes';
import { sendOnce } from './transfers';

export type FaucetPayment =
  | { kind: 'sent'; txHash: string; sender: string; confirmations: number }
  | { kind: 'no-node' }
  | { kind: 'refused'; field: string; message: string };

/**
 * Test mode on a network with a real node: pays `amount` into the transaction's deposit address from the
 * node's faucet account, as a customer would. The watcher accounts it once it has its confirmations.
 */
export async function payFromFaucet(
  db: Db,
  masterKey: string,
  deposit: { transactionId: string; network: string; currency: string; amount: string; txHash?: string },
): Promise<FaucetPayment> {
  const [opened] = await db
    .select()
    .from(depositAddresses)
    .where(eq(depositAddresses.transactionId, deposit.transactionId));
  const node = opened
    ? await chainNodeById(db, masterKey, opened.chainNodeId)
    : await activeChainNode(db, masterKey, 'test', deposit.network);
  if (!node) return { kind: 'no-node' };
  if (deposit.txHash !== undefined) {
    return {
      kind: 'refused',
      field: 'tx_hash',
      message: 'This network is a real chain: the transfer gets its hash there.',
    };
  }
  if (!opened)
    return {
      kind: 'refused',
      field: 'transaction_id',
      message: 'This transaction has no deposit address yet.',
    };
  if (!node.faucet) {
    return {
      kind: 'refused',
      field: 'transaction_id',
      message: `This network is watched on a real node with no test faucet: send to ${opened.address} from a wallet.`,
    };
  }
  const asset = assetOnNode(node, deposit.currency);
  const found = await findCryptoAsset(db, deposit.currency, node.network);
  const units = found ? parseUnits(deposit.amount, found.decimals) : undefined;
  if (!asset || units === undefined) {
    return {
      kind: 'refused',
      field: 'amount',
      message: `The amount field must have at most ${found?.decimals ?? 0} decimal places.`,
    };
  }
  const txHash = await sendOnce(db, node, node.faucet, `faucet:${randomBytes(12).toString('hex')}`, {
    to: opened.address as Address,
    units,
    asset,
  });
  return {
    kind: 'sent',
    txHash,
    sender: node.faucet.address.toLowerCase(),
    confirmations: node.confirmations,
  };
}
