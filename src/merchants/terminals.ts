import type { Db } from '../db/client';
import { auditLog, terminals } from '../db/schema/index';
import { newId } from '../ciphers/ids';
import type { Mode } from '../lib/vocabulary';
import type { TerminalSpec } from '../sandbox/tables';

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
