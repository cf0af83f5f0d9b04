import {
  createKeyPairSignerFromPrivateKeyBytes,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  isSolanaError,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
} from '@solana/kit';
import type { ChainNode } from '../chain/nodes';
import { TransferRejectedError } from '../chain/sends';
import { signedTransaction, tokenPayment } from '../chain/solana/instructions';
import { associatedTokenAccount } from '../chain/solana/accounts';
import { solanaRpc } from '../chain/solana/rpc';

/** The test faucet of a Solana node, and what it holds of `code`. */
export async function solanaFaucet(node: ChainNode, code: string) {
  const signer = await createKeyPairSignerFromPrivateKeyBytes(
    Buffer.from(node.faucetKey!.replace(/^0x/, ''), 'hex'),
  );
  const mint = node.tokens[code];
  if (!mint) return { signer, holds: 0n };
  const account = await associatedTokenAccount(signer.address, mint);
  const balance = await solanaRpc(node.rpcUrl)
    .getTokenAccountBalance(account, { commitment: 'confirmed' })
    .send()
    .catch(() => undefined);
  return { signer, holds: BigInt(balance?.value.amount ?? '0') };
}

/**
 * Test mode: pays `units` of `code` into the associated token account of deposit owner `to` from the
 * node's faucet, opening that account first if need be, as a customer's wallet does. Answered once the
 * node has taken it; the watcher accounts it once it is deep enough.
 */
export async function payFromSolanaFaucet(
  node: ChainNode,
  to: string,
  code: string,
  units: bigint,
  decimals: number,
): Promise<string> {
  const { signer } = await solanaFaucet(node, code);
  const client = solanaRpc(node.rpcUrl);
  const { value: lifetime } = await client.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const signed = await signedTransaction(
    signer,
    lifetime,
    await tokenPayment(signer, signer, signer.address, to, node.tokens[code]!, units, decimals),
  );
  try {
    await client
      .sendTransaction(getBase64EncodedWireTransaction(signed), {
        encoding: 'base64',
        preflightCommitment: 'confirmed',
      })
      .send();
  } catch (error) {
    if (isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)) {
      throw new TransferRejectedError(error.message);
    }
    throw error;
  }
  return getSignatureFromTransaction(signed);
}
