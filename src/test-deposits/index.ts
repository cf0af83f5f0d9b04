import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Db } from '../db/client';
import { depositAddresses } from '../db/schema/index';
import { findCryptoAsset } from '../coins/catalogue';
import { formatUnits, parseUnits } from '../lib/units';
import { activeChainNode, chainNodeById, type ChainNode } from '../chain/nodes';
import { familyOf } from '../chain/families';
import { assetOnNode, erc20Abi, rpc } from '../chain/evm/rpc';
import { faucetAddress, payFromBitcoinFaucet } from './bitcoin-faucet';
import { payFromSolanaFaucet, solanaFaucet } from './solana-faucet';
import { nodeWatchesCurrency } from '../coins/networks';
import { sendOnce } from '../chain/evm/transfers';
import { TransferRejectedError } from '../chain/sends';
import type { Client } from '@temporalio/client';
import {
  assetOf,
  randomTxHash,
  sandboxSender,
  submitDeposit,
  type DepositOutcome,
} from '../transactions/deposits';
import { transactionBody, type TransactionBody, type TransactionRow } from '../transactions/view';
import { lookupTransaction } from '../transactions/lookup';
import type { MerchantScope } from '../transactions/deps';
import { ApiError, fieldError } from '../platform/errors';
import { JsonNumber } from '../lib/json';

export type TestDeposit =
  | { kind: 'on-chain'; txHash: string; confirmations: number }
  | { kind: 'sandbox'; txHash: string; outcome: DepositOutcome }
  | { kind: 'refused'; field: string; message: string };

/**
 * A test-mode deposit into a transaction's address, as the deposit endpoint and the checkout page make
 * it: a real transfer from the faucet where a node watches the network (the watcher accounts it after its
 * confirmations), else a simulated deposit on the sandbox chain, accounted at once.
 */
export async function testDeposit(
  deps: { db: Db; temporal: Client; masterKey: string },
  row: TransactionRow,
  deposit: { amount: string; txHash?: string },
): Promise<TestDeposit> {
  const asset = assetOf(row);
  if (!asset)
    return { kind: 'refused', field: 'transaction_id', message: 'This transaction does not take deposits.' };
  const paid = await payFromFaucet(deps.db, deps.masterKey, {
    transactionId: row.id,
    network: asset.network,
    currency: asset.code,
    ...deposit,
  });
  if (paid.kind === 'refused') return paid;
  if (paid.kind === 'sent')
    return { kind: 'on-chain', txHash: paid.txHash, confirmations: paid.confirmations };
  const txHash = deposit.txHash ?? randomTxHash();
  const outcome = await submitDeposit(deps.db, deps.temporal, row, {
    amount: deposit.amount,
    txHash,
    sender: sandboxSender(txHash),
    source: 'sandbox',
  });
  return { kind: 'sandbox', txHash, outcome };
}

/**
 * The deposit endpoint (test mode): pays into the merchant's transaction's deposit address and answers
 * the transaction with the deposit. On a network with a registered node (a local anvil under
 * `npm run dev`) it is a real transfer from the node's faucet account, answered `pending` with the
 * confirmations the watcher waits for. On the sandbox chain the deposit is simulated and the answer says
 * how it was accounted: counted, refunded (it came after the payment was complete or the window closed),
 * held (after the transaction closed) or duplicate.
 */
export async function simulateDeposit(
  deps: { db: Db; temporal: Client; masterKey: string },
  merchant: MerchantScope,
  transactionId: string,
  input: { amount: string; tx_hash?: string | undefined },
): Promise<TransactionBody & { deposit: Record<string, unknown> }> {
  const row = await lookupTransaction(deps.db, merchant, transactionId);
  if (!row || (row.kind !== 'ramp' && row.kind !== 'crypto_payin'))
    throw new ApiError('TRANSACTION_NOT_FOUND');
  const made = await testDeposit(deps, row, {
    amount: input.amount,
    ...(input.tx_hash === undefined ? {} : { txHash: input.tx_hash }),
  });
  if (made.kind === 'refused') fieldError(made.field, made.message);
  const amount = new JsonNumber(input.amount);
  if (made.kind === 'on-chain') {
    // Accounted by the chain watcher once it has its confirmations: the status and webhook tell.
    const pending = {
      tx_hash: made.txHash,
      amount,
      disposition: 'pending',
      confirmations_required: made.confirmations,
    };
    return { ...transactionBody(row), deposit: pending };
  }
  const { outcome, txHash } = made;
  if (outcome === 'not-accepting') fieldError('transaction_id', 'This transaction does not take deposits.');
  if ('invalid' in outcome) fieldError('amount', outcome.invalid);
  const after = (await lookupTransaction(deps.db, merchant, row.id)) ?? row;
  return {
    ...transactionBody(after),
    deposit: { tx_hash: txHash, amount, disposition: outcome.disposition },
  };
}

type FaucetPayment =
  | { kind: 'sent'; txHash: string; sender: string; confirmations: number }
  | { kind: 'no-node' }
  | { kind: 'refused'; field: string; message: string };

/**
 * Test mode on a network with a real node: pays `amount` into the transaction's deposit address from the
 * node's faucet account, as a customer would. The watcher accounts it once it has its confirmations.
 */
async function payFromFaucet(
  db: Db,
  masterKey: string,
  deposit: { transactionId: string; network: string; currency: string; amount: string; txHash?: string },
): Promise<FaucetPayment> {
  const [opened] = await db
    .select()
    .from(depositAddresses)
    .where(eq(depositAddresses.transactionId, deposit.transactionId));
  // An asset the network's node does not watch (TRX on TRON) is on the sandbox chain.
  if (!opened && !nodeWatchesCurrency(deposit.network, deposit.currency)) return { kind: 'no-node' };
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
  if (!node.faucetKey) {
    return {
      kind: 'refused',
      field: 'transaction_id',
      message: `This network is watched on a real node with no test faucet: send to ${familyOf(node).shownAddress(opened.address)} from a wallet.`,
    };
  }
  if (node.family === 'bitcoin') return payFromBitcoin(db, node, opened.address, deposit.amount);
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
  if (node.family === 'solana')
    return payFromSolana(node, opened.address, deposit.currency, units, found!.decimals);
  // The EVM family's and TRON's: an ERC-20 (TRC-20) or native transfer from the faucet's account.
  const faucet = privateKeyToAccount(`0x${node.faucetKey.replace(/^0x/, '')}` as Hex);
  const client = rpc(node.rpcUrl);
  const holds =
    asset === 'native'
      ? await client.getBalance({ address: faucet.address })
      : await client.readContract({
          address: asset,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [faucet.address],
        });
  if (holds < units) {
    return {
      kind: 'refused',
      field: 'amount',
      message: `The test faucet holds ${formatUnits(holds, found!.decimals)} ${deposit.currency}: deposit at most that.`,
    };
  }
  // Answered once the node has taken the transfer; the watcher accounts it once it is deep enough.
  try {
    const txHash = await sendOnce(
      db,
      node,
      faucet,
      `faucet:${randomBytes(12).toString('hex')}`,
      { to: opened.address as Address, units, asset },
      { wait: false },
    );
    return { kind: 'sent', txHash, sender: faucet.address.toLowerCase(), confirmations: node.confirmations };
  } catch (error) {
    return faucetRefusal(error);
  }
}

/** A faucet transfer the node refused, as the deposit endpoint answers it; any other failure is thrown. */
function faucetRefusal(error: unknown): FaucetPayment {
  if (!(error instanceof TransferRejectedError)) throw error;
  return { kind: 'refused', field: 'amount', message: `The test faucet could not send it: ${error.message}` };
}

/** The Bitcoin side of `payFromFaucet`: a real transaction from the local node's mined coins. */
async function payFromBitcoin(db: Db, node: ChainNode, to: string, amount: string): Promise<FaucetPayment> {
  const units = parseUnits(amount, 8);
  if (units === undefined) {
    return {
      kind: 'refused',
      field: 'amount',
      message: 'The amount field must have at most 8 decimal places.',
    };
  }
  try {
    const txHash = await payFromBitcoinFaucet(db, node, to, units);
    return { kind: 'sent', txHash, sender: faucetAddress(node)!, confirmations: node.confirmations };
  } catch (error) {
    return faucetRefusal(error);
  }
}

/** The Solana side of `payFromFaucet`: a real SPL token transfer from the faucet's token account. */
async function payFromSolana(
  node: ChainNode,
  to: string,
  code: string,
  units: bigint,
  decimals: number,
): Promise<FaucetPayment> {
  const { signer, holds } = await solanaFaucet(node, code);
  if (holds < units) {
    return {
      kind: 'refused',
      field: 'amount',
      message: `The test faucet holds ${formatUnits(holds, decimals)} ${code}: deposit at most that.`,
    };
  }
  try {
    const txHash = await payFromSolanaFaucet(node, to, code, units, decimals);
    return { kind: 'sent', txHash, sender: signer.address, confirmations: node.confirmations };
  } catch (error) {
    return faucetRefusal(error);
  }
}
