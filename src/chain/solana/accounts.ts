/** Solana's token programs, the account a wallet holds a token in, and what the watcher's cursor keeps of a slot. */
import { address, getAddressEncoder, getProgramDerivedAddress, type Address } from '@solana/kit';
import { solanaRpc } from './rpc';

export const TOKEN_PROGRAM = address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
export const ASSOCIATED_TOKEN_PROGRAM = address('ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL');

/**
 * How long a derived token account is kept after it was last asked for. Deriving one takes about 0.6 ms
 * (hashes until a seed lands off the curve) and the watcher asks for every deposit address it reads: the
 * open ones each poll, those closed in the last week once a minute. Kept in two generations, the one being
 * filled and the one before it, so an address no longer read (its week over) is let go within twice this,
 * and the worker keeps what its reads use rather than every address it ever read.
 */
export const TOKEN_ACCOUNT_KEPT_MS = 10 * 60_000;

let tokenAccounts = new Map<string, Address>();
let tokenAccountsBefore = new Map<string, Address>();
let generationFrom = Date.now();

/** The associated token account of `owner` for `mint`: the account wallets pay an SPL token into. */
export async function associatedTokenAccount(owner: string, mint: string): Promise<Address> {
  const now = Date.now();
  if (now - generationFrom >= TOKEN_ACCOUNT_KEPT_MS) {
    // After a pause of two generations or more, nothing kept was asked for in the last one.
    tokenAccountsBefore = now - generationFrom >= 2 * TOKEN_ACCOUNT_KEPT_MS ? new Map() : tokenAccounts;
    tokenAccounts = new Map();
    generationFrom = now;
  }
  const key = `${owner}:${mint}`;
  let ata = tokenAccounts.get(key) ?? tokenAccountsBefore.get(key);
  if (!ata) {
    const encoder = getAddressEncoder();
    [ata] = await getProgramDerivedAddress({
      programAddress: ASSOCIATED_TOKEN_PROGRAM,
      seeds: [encoder.encode(address(owner)), encoder.encode(TOKEN_PROGRAM), encoder.encode(address(mint))],
    });
  }
  tokenAccounts.set(key, ata);
  return ata;
}

/** How many derived token accounts this process keeps (both generations; one in both counts once). */
export function tokenAccountsKept(): number {
  let kept = tokenAccounts.size;
  for (const key of tokenAccountsBefore.keys()) if (!tokenAccounts.has(key)) kept++;
  return kept;
}

/** What the watcher's cursor keeps of a slot: the cluster it was read on, and the slot. */
export async function slotMark(url: string, slot: bigint): Promise<string> {
  return `${await solanaRpc(url).getGenesisHash().send()}:${slot}`;
}
