import type { Db } from '../db/client';
import { preparedOnce } from '../db/prepared';
import { auditLog, terminals } from '../db/schema/index';
import { newId } from '../ciphers/ids';
import { decryptSecret, encryptSecret } from '../ciphers/secrets';
import type { Mode, TransactionKind } from '../lib/vocabulary';
import { isSandboxConnector, type TerminalSpec } from '../schemas/sandbox-cards';
import { and, eq, sql } from 'drizzle-orm';

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

/**
 * Adds a terminal. `credentials` (a real connector's keys) are stored encrypted with the master key and
 * never written to the audit log.
 */
export async function addTerminal(
  db: Db,
  merchantId: string,
  mode: Mode,
  spec: TerminalSpec,
  secrets?: { masterKey: string; credentials: Record<string, string> },
): Promise<{ terminal_id: string }> {
  const terminalId = newId('ter');
  const credentialsEnc = secrets
    ? encryptSecret(JSON.stringify(secrets.credentials), secrets.masterKey)
    : null;
  await db.transaction(async (tx) => {
    await tx.insert(terminals).values({ id: terminalId, merchantId, mode, ...spec, credentialsEnc });
    await tx.insert(auditLog).values({
      merchantId,
      action: 'terminal.added',
      details: { terminalId, mode, ...spec, credentials: secrets ? Object.keys(secrets.credentials) : [] },
    });
  });
  return { terminal_id: terminalId };
}

/** A terminal's connector credentials, decrypted; undefined when it has none. */
export async function terminalCredentials(
  db: Db,
  masterKey: string,
  terminalId: string,
): Promise<Record<string, string> | undefined> {
  // Prepared once, as the terminals below: read for every connector call.
  const read = preparedOnce(db, 'terminal_credentials', () =>
    db
      .select({ credentialsEnc: terminals.credentialsEnc })
      .from(terminals)
      .where(eq(terminals.id, sql.placeholder('terminalId')))
      .prepare('terminal_credentials'),
  );
  const [row] = await read.execute({ terminalId });
  return row?.credentialsEnc
    ? (JSON.parse(decryptSecret(row.credentialsEnc, masterKey)) as Record<string, string>)
    : undefined;
}

/** A terminal a transaction may be routed to. */
export interface ActiveTerminal {
  terminalId: string;
  connector: string;
  descriptor: string | null;
}

/**
 * The merchant's active terminals of a mode that take a kind, by priority: what the create checks a
 * pinned `terminal_id` against, what the workflow routes over, and what the APM page offers methods from.
 * With `terminalId`, that terminal only (none when it is not one of them).
 */
export async function activeTerminals(
  db: Db,
  scope: { merchantId: string; mode: Mode },
  kind: TransactionKind,
  terminalId?: string,
): Promise<ActiveTerminal[]> {
  // Prepared once (every transaction lists them): one shape for both, the terminal's condition void when none
  // is pinned.
  const list = preparedOnce(db, 'active_terminals', () =>
    db
      .select({ terminalId: terminals.id, connector: terminals.connector, descriptor: terminals.descriptor })
      .from(terminals)
      .where(
        and(
          eq(terminals.merchantId, sql.placeholder('merchantId')),
          eq(terminals.mode, sql.placeholder('mode')),
          eq(terminals.active, true),
          sql`${sql.placeholder('kind')} = any(${terminals.kinds})`,
          sql`(${sql.placeholder('terminalId')}::text is null or ${terminals.id} = ${sql.placeholder('terminalId')})`,
        ),
      )
      .orderBy(terminals.priority, terminals.id)
      .prepare('active_terminals'),
  );
  return list.execute({
    merchantId: scope.merchantId,
    mode: scope.mode,
    kind,
    terminalId: terminalId ?? null,
  });
}
