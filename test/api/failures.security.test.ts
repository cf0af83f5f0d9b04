import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, payoutRequest, type MerchantClient } from '../helpers/merchant-client';
import { payloadCodec } from '../../src/temporal/client';
import proto from '@temporalio/proto';

const { temporal } = proto;

/**
 * What failures leave in Temporal's history, where anyone with the Temporal UI reads them: no stack trace
 * (our file paths), and no message the service did not write for people unless encrypted by the payload
 * codec like every other payload.
 */
let env: TestEnv;
let merchant: MerchantClient;
const SECRET = 'relation "vault" row (pan 4111111111111111) at /srv/payments/activities/payouts.ts:42';

beforeAll(async () => {
  env = await startTestEnv(
    { FIRST_ANSWER_TIMEOUT_MS: '1000' },
    {
      // A payout send that fails as a driver might, echoing data and a path.
      wrap: () => ({
        reserveAndSendPayout: async () => {
          throw new Error(SECRET);
        },
      }),
    },
  );
  merchant = merchantClient(env.app, await env.createMerchant());
});
afterAll(() => env?.close());

/** Every failure recorded anywhere in a history, however deep. */
function failuresIn(value: unknown, found: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (Array.isArray(value)) for (const item of value) failuresIn(item, found);
  else if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (Object.keys(record).some((key) => key.endsWith('FailureInfo'))) found.push(record);
    for (const member of Object.values(record)) failuresIn(member, found);
  }
  return found;
}

async function historyOf(id: string) {
  const history = await env.client.workflow.getHandle(id).fetchHistory();
  return temporal.api.history.v1.History.fromObject(history).toJSON();
}

describe('failures in Temporal history', () => {
  it('carry no stack, and a decline stays readable where the workflow reads it', async () => {
    const declined = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ card_number: '4000000000000002' }),
    );
    const id = declined.json().data.transaction_id as string;
    // The create answers with the decline, or, on a machine too busy to reach it within the create's wait,
    // PENDING: the decline is then the transaction's status soon after.
    await expect
      .poll(async () => (await merchant.get(`/api/test/status/${id}`)).json(), {
        timeout: 30_000,
        interval: 250,
      })
      .toMatchObject({ status: 'FAILED', message: 'Card declined.' });
    const history = await historyOf(id);
    const failures = failuresIn(history);
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) expect(failure.stackTrace ?? '').toBe('');
    expect(failures.map((f) => f.message)).toContain('Card declined.');
    expect(JSON.stringify(history)).not.toMatch(/\.ts:\d+|node_modules|\/work\//);
  });

  it('encrypt a message the service did not write, which the codec reads back for the UI', async () => {
    const walletId = merchant.credentials.wallets.find(
      (w) => w.mode === 'test' && w.currency === 'USD',
    )!.wallet_id;
    const created = await merchant.post('/api/v1/test/payout', payoutRequest(walletId, { amount: 300 }));
    const id = created.json().data.transaction_id as string;
    const failed = await expect
      .poll(
        async () => {
          const found = failuresIn(await historyOf(id)).find((f) => f.message === 'Encoded failure');
          return found;
        },
        { timeout: 30_000, interval: 250 },
      )
      .toBeDefined();
    void failed;
    const history = await historyOf(id);
    const text = JSON.stringify(history);
    expect(text).not.toContain('4111111111111111');
    expect(text).not.toContain('/srv/payments');
    for (const failure of failuresIn(history)) expect(failure.stackTrace ?? '').toBe('');
    // The UI decodes it through the codec endpoint: the message is there for ops, encrypted at rest.
    const encoded = failuresIn(history).find((f) => f.message === 'Encoded failure')!;
    const attributes = encoded.encodedAttributes as { metadata: Record<string, string>; data: string };
    const [decoded] = await payloadCodec(env.config).decode([
      {
        metadata: Object.fromEntries(
          Object.entries(attributes.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
        ),
        data: Buffer.from(attributes.data, 'base64'),
      },
    ]);
    expect(JSON.parse(Buffer.from(decoded!.data!).toString('utf8'))).toEqual({
      message: SECRET,
      stack_trace: '',
    });
    await env.client.workflow.getHandle(id).terminate('test over');
  });
});
