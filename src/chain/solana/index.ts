/**
 * The Solana family: Solana's JSON-RPC, SPL tokens to each deposit owner's associated token account,
 * the treasury paying every fee. Addresses are base58, case-sensitive, stored as shown.
 */
import type { ChainFamily } from '../family';
import { isSolanaAddress, solanaKeys } from './keys';
import { solanaReader } from './reader';
import { registerSolanaNode } from './register';
import { solanaSend } from './send';

export const solana: ChainFamily = {
  depositAddress: (node, index) => solanaKeys(node).depositAddress(index),
  treasury: (node) => solanaKeys(node).treasuryAddress(),
  shownAddress: (stored) => stored,
  storedAddress: (given) => (isSolanaAddress(given) ? given : undefined),
  reader: solanaReader,
  send: solanaSend,
  register: registerSolanaNode,
};
