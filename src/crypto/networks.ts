import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { chainNodes } from '../db/schema/index';
import type { Mode } from '../lib/vocabulary';

/**
 * What the domain knows of the networks the chain adapters (src/chain) watch: which EVM networks there
 * are, and whether a node is registered for one. The adapters build on this; the domain never imports
 * them.
 */

/** Networks an EVM node can serve, with the native coin each one pays gas in. */
export const EVM_NATIVE_COINS: Readonly<Record<string, string>> = {
  ETHEREUM: 'ETH',
  BINANCE_SMART_CHAIN: 'BNB',
  POLYGON: 'POL',
  AVALANCHE: 'AVAX',
};

/** Whether a node watches `network` for `mode` (no secrets read). */
export async function isWatched(db: Db, mode: Mode, network: string): Promise<boolean> {
  const rows = await db
    .select({ id: chainNodes.id })
    .from(chainNodes)
    .where(and(eq(chainNodes.mode, mode), eq(chainNodes.network, network), eq(chainNodes.active, true)));
  return rows.length > 0;
}
