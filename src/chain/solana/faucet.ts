import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromPrivateKeyBytes,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getU64Encoder,
  isSolanaError,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  type AccountSignerMeta,
  type Address,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import type { ChainNode } from '../nodes';
import { TransferRejectedError } from '../transfers';
import { ASSOCIATED_TOKEN_PROGRAM, TOKEN_PROGRAM, associatedTokenAccount } from './reader';
import { solanaRpc } from './rpc';

const SYSTEM_PROGRAM = address('11111111111111111111111111111111');

const signerMeta = (
  signer: TransactionSigner,
  role: AccountRole.WRITABLE_SIGNER | AccountRole.READONLY_SIGNER,
): AccountSignerMeta => ({ address: signer.address, role, signer });

/** The associated token program's CreateIdempotent: opens `owner`'s account for `mint` unless it is open. */
export function createAssociatedTokenAccountIdempotent(
  payer: TransactionSigner,
  account: Address,
  owner: Address,
  mint: Address,
): Instruction {
  return {
    programAddress: ASSOCIATED_TOKEN_PROGRAM,
    accounts: [
      signerMeta(payer, AccountRole.WRITABLE_SIGNER),
      { address: account, role: AccountRole.WRITABLE },
      { address: owner, role: AccountRole.READONLY },
      { address: mint, role: AccountRole.READONLY },
      { address: SYSTEM_PROGRAM, role: AccountRole.READONLY },
      { address: TOKEN_PROGRAM, role: AccountRole.READONLY },
    ],
    data: new Uint8Array([1]),
  };
}

/** The token program's TransferChecked (instruction 12): `units` of `mint`, checked against `decimals`. */
export function transferChecked(
  source: Address,
  mint: Address,
  destination: Address,
  authority: TransactionSigner,
  units: bigint,
  decimals: number,
): Instruction {
  return {
    programAddress: TOKEN_PROGRAM,
    accounts: [
      { address: source, role: AccountRole.WRITABLE },
      { address: mint, role: AccountRole.READONLY },
      { address: destination, role: AccountRole.WRITABLE },
      signerMeta(authority, AccountRole.READONLY_SIGNER),
    ],
    data: new Uint8Array([12, ...getU64Encoder().encode(units), decimals]),
  };
}

/** The test faucet of a Solana node, and what it holds of `code`. */
export async function solanaFaucet(node: ChainNode, code: string) {
  const signer = await createKeyPairSignerFromPrivateKeyBytes(node.solanaFaucet!);
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
  const mint = address(node.tokens[code]!);
  const owner = address(to);
  const client = solanaRpc(node.rpcUrl);
  const { value: lifetime } = await client.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const source = await associatedTokenAccount(signer.address, mint);
  const destination = await associatedTokenAccount(owner, mint);
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(signer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          createAssociatedTokenAccountIdempotent(signer, destination, owner, mint),
          transferChecked(source, mint, destination, signer, units, decimals),
        ],
        m,
      ),
  );
  const signed = await signTransactionMessageWithSigners(message);
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
