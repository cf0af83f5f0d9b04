import type { Db } from '../db/client';
import { auditLog, terminals } from '../db/schema/index';
import { newId } from '../ciphers/ids';
import type { Mode } from '../lib/vocabulary';
import { isSandboxConnector, type TerminalSpec } from '../sandbox/tables';
import { and, eq } from 'drizzle-orm';

/**
 * Active live terminals on a sandbox connector. Unless ALLOW_SANDBOX_IN_LIVE is set, the service refuses
 * to start while there is one: a sandbox approves any card, and live mode must never pretend to charge.
 */
export async function liveSandboxTerminals(
  db: Db,
): Promise<{ id: string; merchantId: string; connector: string }[]> {
  const rows = await db
    .select({ id: terminals.id, merchantId: terminals.merchantId, connector: terminals.connector })
    .from(terminals)
    .where(and(eq(terminals.mode, 'live'), eq(terminals.active, true)));
  return rows.filter((row) => isSandboxConnector(row.connector));
}

export async function addTerminal(
  db: Db,
  merchantId: string,
  mode: Mode,
  spec: TerminalSpec,
): Promise<{ terminal_id: string }> {
  const terminalId = newId('ter');
  await db.transaction(async (tx) => {
    await tx.insert(terminals).values({ id: terminalId, merchantId, mode, ...spec });
    await tx
      .insert(auditLog)
      .values({ merchantId, action: 'terminal.added', details: { terminalId, mode, ...spec } });
  });
  return { terminal_id: terminalId };
}
