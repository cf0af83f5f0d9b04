import { sql } from 'drizzle-orm';
import type { TestEnv } from './env';
import { payloadCodec } from '../../src/temporal/client';

/** Every row of every table of ours, as text. */
export async function databaseText(env: TestEnv): Promise<string> {
  const tables = await env.database.db.execute<{ name: string }>(
    sql`select tablename as name from pg_tables where schemaname = 'public'`,
  );
  const parts: string[] = [];
  for (const { name } of tables.rows) {
    const rows = await env.database.db.execute(sql.raw(`select row_to_json(t)::text as j from "${name}" t`));
    parts.push(...rows.rows.map((r) => String((r as { j: string }).j)));
  }
  return parts.join('\n');
}

/** Every event of a workflow's history with its payloads decoded by our codec. */
export async function historyText(env: TestEnv, workflowId: string): Promise<string> {
  const codec = payloadCodec(env.config);
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  const decoded: string[] = [];
  const visit = async (value: unknown): Promise<void> => {
    if (!value || typeof value !== 'object') return;
    const candidate = value as { metadata?: Record<string, Uint8Array>; data?: Uint8Array };
    if (candidate.metadata && candidate.data instanceof Uint8Array) {
      const [plain] = await codec.decode([candidate]);
      decoded.push(Buffer.from(plain!.data ?? new Uint8Array()).toString('utf8'));
      return;
    }
    for (const child of Object.values(value)) await visit(child);
  };
  await visit(history);
  return `${JSON.stringify(history)}\n${decoded.join('\n')}`;
}

/** Every decoded history of the environment's task queue. */
export async function allHistoriesText(env: TestEnv): Promise<string[]> {
  const histories: string[] = [];
  for await (const execution of env.client.workflow.list({
    query: `TaskQueue = '${env.config.TEMPORAL_TASK_QUEUE}'`,
  })) {
    histories.push(await historyText(env, execution.workflowId));
  }
  return histories;
}

/**
 * Where card data could leak: Postgres, the service's log lines and every decoded Temporal history. The
 * caller checks no card number or CVV appears in any, and that the vault holds tombstones only.
 */
export async function cardDataScan(env: TestEnv) {
  const histories = await allHistoriesText(env);
  const vault = await env.database.db.execute(
    sql`select count(*)::int as n, count(pan_enc)::int as pans, count(cvv_enc)::int as cvvs,
               count(expiry_enc)::int as expiries from card_vault`,
  );
  return {
    histories: histories.length,
    places: {
      postgres: await databaseText(env),
      logs: env.logs.join('\n'),
      temporal: histories.join('\n'),
    },
    vault: vault.rows[0] as { n: number; pans: number; cvvs: number; expiries: number },
  };
}
