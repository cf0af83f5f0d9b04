/** How a network of Ethereum's JSON-RPC writes its addresses and keys its nodes (the EVM family, TRON). */
import { isAddress, type Address } from 'viem';

export interface EvmAddressing {
  /** The SLIP-44 coin type the node's keys derive at. */
  coinType: number;
  /** The 20 bytes as lower-case hex (as stored) to the form merchants and customers see. */
  shown(hex: string): string;
  /** An address as given to lower-case hex; undefined when it is not one. */
  stored(given: string): Address | undefined;
  /** How the shown form starts, for messages (`0x`, `T`). */
  prefix: string;
}

/** Ethereum's own form: checksummed or lower-case hex, keys at coin type 60. */
export const ethereumAddressing: EvmAddressing = {
  coinType: 60,
  shown: (hex) => hex,
  stored: (given) => (isAddress(given) ? (given.toLowerCase() as Address) : undefined),
  prefix: '0x',
};
