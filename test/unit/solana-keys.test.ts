import { afterEach, describe, expect, it, vi } from 'vitest';
import { address, createKeyPairSignerFromPrivateKeyBytes, generateKeyPairSigner } from '@solana/kit';
import {
  TOKEN_PROGRAM_ADDRESS,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getTransferCheckedInstruction,
} from '@solana-program/token';
import { SolanaKeys, isSolanaAddress, slip10Ed25519 } from '../../src/chain/solana/keys';
import {
  TOKEN_ACCOUNT_KEPT_MS,
  associatedTokenAccount,
  tokenAccountsKept,
} from '../../src/chain/solana/accounts';
import { createAssociatedTokenAccountIdempotent, transferChecked } from '../../src/chain/solana/instructions';
import { clusterOf } from '../../src/chain/solana/rpc';

const hex = (bytes: ArrayLike<number>) => Buffer.from(Uint8Array.from(bytes)).toString('hex');
const USDT_MINT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';

describe('Solana keys', () => {
  it("derives SLIP-0010 ed25519 keys as the standard's test vector 1 does", () => {
    const seed = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
    expect(hex(slip10Ed25519(seed, []))).toBe(
      '2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7',
    );
    expect(hex(slip10Ed25519(seed, [0]))).toBe(
      '68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3',
    );
    expect(hex(slip10Ed25519(seed, [0, 1, 2, 2, 1_000_000_000]))).toBe(
      '8f94d394a8e8fd6b1bc2f3f49f5c47e385281d5c17e65324b0f62483e37e8793',
    );
    expect(() => slip10Ed25519(seed, [2 ** 31])).toThrow('outside');
  });

  it('gives each index its own address, the public key of its private key as Solana encodes it', async () => {
    const keys = new SolanaKeys('11'.repeat(32));
    const addresses = [0, 1, 2].map((i) => keys.depositAddress(i));
    expect(new Set(addresses).size).toBe(3);
    for (const [i, shown] of addresses.entries()) {
      expect(isSolanaAddress(shown)).toBe(true);
      expect((await createKeyPairSignerFromPrivateKeyBytes(keys.depositKey(i))).address).toBe(shown);
    }
    expect(isSolanaAddress('0xdAC17F958D2ee523a2206206994597C13D831ec7')).toBe(false);
    expect(isSolanaAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')).toBe(false);
  });

  it('finds the associated token account and encodes the two instructions as the SPL token client does', async () => {
    const payer = await generateKeyPairSigner();
    const owner = address('9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM');
    const [expected] = await findAssociatedTokenPda({
      owner,
      mint: address(USDT_MINT),
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    const ata = await associatedTokenAccount(owner, USDT_MINT);
    expect(ata).toBe(expected);

    const ours = createAssociatedTokenAccountIdempotent(payer, ata, owner, address(USDT_MINT));
    const theirs = getCreateAssociatedTokenIdempotentInstruction({
      payer,
      ata,
      owner,
      mint: address(USDT_MINT),
    });
    expect(ours.programAddress).toBe(theirs.programAddress);
    expect(ours.accounts!.map((a) => [a.address, a.role])).toEqual(
      theirs.accounts.map((a) => [a.address, a.role]),
    );
    expect(hex(ours.data!)).toBe(hex(theirs.data));

    const source = await associatedTokenAccount(payer.address, USDT_MINT);
    const sent = transferChecked(source, address(USDT_MINT), ata, payer, 12_345_678n, 6);
    const reference = getTransferCheckedInstruction({
      source,
      mint: address(USDT_MINT),
      destination: ata,
      authority: payer,
      amount: 12_345_678n,
      decimals: 6,
    });
    expect(sent.accounts!.map((a) => [a.address, a.role])).toEqual(
      reference.accounts.map((a) => [a.address, a.role]),
    );
    expect(hex(sent.data!)).toBe(hex(reference.data));
  });

  it('names the public clusters by genesis hash, any other one local', () => {
    expect(clusterOf('5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d')).toBe('mainnet-beta');
    expect(clusterOf('EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG')).toBe('devnet');
    expect(clusterOf('4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY')).toBe('testnet');
    expect(clusterOf('11111111111111111111111111111111')).toBe('local');
  });

  describe('derived token accounts', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('are kept while asked for and let go once no read has asked for them in two generations', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const [a, b, c] = await Promise.all([1, 2, 3].map(() => generateKeyPairSigner()));
      const derived = async (owner: string) =>
        (
          await findAssociatedTokenPda({
            owner: address(owner),
            mint: address(USDT_MINT),
            tokenProgram: TOKEN_PROGRAM_ADDRESS,
          })
        )[0];
      // Whatever an earlier test left starts a generation now.
      vi.advanceTimersByTime(TOKEN_ACCOUNT_KEPT_MS);
      await associatedTokenAccount(a!.address, USDT_MINT);
      const start = tokenAccountsKept();

      await associatedTokenAccount(b!.address, USDT_MINT);
      expect(tokenAccountsKept()).toBe(start + 1);
      vi.advanceTimersByTime(TOKEN_ACCOUNT_KEPT_MS);
      // a is asked for again in the next generation: kept; b is not.
      expect(await associatedTokenAccount(a!.address, USDT_MINT)).toBe(await derived(a!.address));
      vi.advanceTimersByTime(TOKEN_ACCOUNT_KEPT_MS);
      expect(await associatedTokenAccount(c!.address, USDT_MINT)).toBe(await derived(c!.address));
      expect(tokenAccountsKept()).toBe(2);
      // One let go is derived again, the same.
      expect(await associatedTokenAccount(b!.address, USDT_MINT)).toBe(await derived(b!.address));
      expect(tokenAccountsKept()).toBe(3);
      // After a pause of two generations, none of them was asked for in the last one.
      vi.advanceTimersByTime(2 * TOKEN_ACCOUNT_KEPT_MS);
      await associatedTokenAccount(a!.address, USDT_MINT);
      expect(tokenAccountsKept()).toBe(1);
    });
  });
});
