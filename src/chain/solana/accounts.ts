/** Solana's token programs, the account a wallet holds a token in, and what the watcher's cursor keeps of a slot. */
import { address, getAddressEncoder, getProgramDerivedAddress, type Address } from '@solana/kit';
import { solanaRpc } from './rpc';

export const TOKEN_PROGRAM = address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
export const ASSOCIATED_TOKEN_PROGRAM = address('ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL');

const ataCache = new Map<string, Address>();

/** The associated token account of `owner` for `mint`: the account wallets pay an SPL token into. */
export async function associatedTokenAccount(owner: string, mint: string): Promise<Address> {
  const key = `${owner}:${mint}`;
  let ata = ataCache.get(key);
  if (!ata) {
    const encoder = getAddressEncoder();
    [ata] = await getProgramDerivedAddress({
      programAddress: ASSOCIATED_TOKEN_PROGRAM,
      seeds: [encoder.encode(address(owner)), encoder.encode(TOKEN_PROGRAM), encoder.encode(address(mint))],
    });
    ataCache.set(key, ata);
  }
  return ata;
}

/** What the watcher's cursor keeps of a slot: the cluster it was read on, and the slot. */
export async function slotMark(url: string, slot: bigint): Promise<string> {
  return `${await solanaRpc(url).getGenesisHash().send()}:${slot}`;
}
