import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver } from '../helpers/webhook-receiver';
import { payloadCodec } from '../../src/temporal/client';

let env: TestEnv;
let merchant: MerchantClient;

beforeAll(async () => {
  env = await startTestEnv();
  merchant = merchantClient(env.app, await env.createMerchant());
});
afterAll(() => env?.close());

const CVV = '8317';
const cards = ['4111111111111111', '4242424242424242', '4000000000000119', '4000000000000002'];

/** Every row of every table of ours, as text. */
async function databaseText(): Promise<string> {
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
async function historyText(workflowId: string): Promise<string> {
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

describe('card data never leaves the vault in clear', () => {
  it('keeps card numbers and the CVV out of Postgres, logs and Temporal history after full runs', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const ids: string[] = [];
      for (const [index, card] of cards.entries()) {
        const response = await merchant.post(
          '/api/v1/test/card',
          cardRequest({
            card_number: card,
            card_cvv: CVV,
            webhook_url: receiver.url,
            order_id: `vault-${index}`,
          }),
        );
        ids.push(response.json().data.transaction_id);
      }
      const challenge = ids[0]!;
      const page = await env.app.inject({ url: `/api/v1/test/card/checkout/${challenge}` });
      const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
      await env.app.inject({
        method: 'POST',
        url: `/api/v1/test/card/checkout/${challenge}`,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie: String(page.headers['set-cookie']).split(';')[0]!,
        },
        payload: new URLSearchParams({ decision: 'approve', csrf }).toString(),
      });
      await receiver.waitFor(cards.length);

      const histories: string[] = [];
      for await (const execution of env.client.workflow.list({
        query: `TaskQueue = '${env.config.TEMPORAL_TASK_QUEUE}'`,
      })) {
        histories.push(await historyText(execution.workflowId));
      }
      expect(histories.length).toBeGreaterThanOrEqual(cards.length * 2);
      const everything = {
        postgres: await databaseText(),
        logs: env.logs.join('\n'),
        temporal: histories.join('\n'),
      };
      expect(everything.temporal).toContain('"last4":"1111"');
      for (const [where, text] of Object.entries(everything)) {
        for (const card of cards) expect(text, `${card} in ${where}`).not.toContain(card);
        expect(text, `CVV in ${where}`).not.toMatch(new RegExp(`["':]${CVV}["]`));
      }
      // Every vault row is a tombstone: not even the encrypted card data outlives the transactions.
      const vault = await env.database.db.execute(
        sql`select count(*)::int as n, count(pan_enc)::int as pans, count(cvv_enc)::int as cvvs,
                   count(expiry_enc)::int as expiries from card_vault`,
      );
      expect(vault.rows[0]).toEqual({ n: expect.any(Number), pans: 0, cvvs: 0, expiries: 0 });
      expect((vault.rows[0] as { n: number }).n).toBeGreaterThan(0);
    } finally {
      await receiver.close();
    }
  });
});
