import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getU64Encoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type AccountSignerMeta,
  type Address,
  type Blockhash,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import { ASSOCIATED_TOKEN_PROGRAM, TOKEN_PROGRAM, associatedTokenAccount } from './accounts';

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

/**
 * A token payment as wallets make one: `units` of `mint` from `fromOwner`'s associated token account (its
 * `authority` signing) to `toOwner`'s, which `payer` opens first if it is not open yet.
 */
export async function tokenPayment(
  payer: TransactionSigner,
  authority: TransactionSigner,
  fromOwner: string,
  toOwner: string,
  mint: string,
  units: bigint,
  decimals: number,
): Promise<Instruction[]> {
  const destination = await associatedTokenAccount(toOwner, mint);
  return [
    createAssociatedTokenAccountIdempotent(payer, destination, address(toOwner), address(mint)),
    transferChecked(
      await associatedTokenAccount(fromOwner, mint),
      address(mint),
      destination,
      authority,
      units,
      decimals,
    ),
  ];
}

/** `instructions` as one transaction, `feePayer` paying, on `lifetime`'s blockhash, signed by every signer. */
export function signedTransaction(
  feePayer: TransactionSigner,
  lifetime: { blockhash: Blockhash; lastValidBlockHeight: bigint },
  instructions: Instruction[],
) {
  return signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(feePayer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    ),
  );
}
