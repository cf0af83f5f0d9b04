import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver } from '../helpers/webhook-receiver';
import { cardDataScan } from '../helpers/card-scan';

let env: TestEnv;
let merchant: MerchantClient;

beforeAll(async () => {
  env = await startTestEnv();
  merchant = merchantClient(env.app, await env.createMerchant());
});
afterAll(() => env?.close());

const CVV = '8317';
const cards = ['4111111111111111', '4242424242424242', '4000000000000119', '4000000000000002'];

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

      const scan = await cardDataScan(env);
      // One history per transaction: its webhook went at the first attempt, from its own workflow.
      expect(scan.histories).toBeGreaterThanOrEqual(cards.length);
      expect(scan.places.temporal).toContain('"last4":"1111"');
      for (const [where, text] of Object.entries(scan.places)) {
        for (const card of cards) expect(text, `${card} in ${where}`).not.toContain(card);
        expect(text, `CVV in ${where}`).not.toMatch(new RegExp(`["':]${CVV}["]`));
      }
      // Every vault row is a tombstone: not even the encrypted card data outlives the transactions.
      expect(scan.vault).toEqual({ n: expect.any(Number), pans: 0, cvvs: 0, expiries: 0 });
      expect(scan.vault.n).toBeGreaterThan(0);
    } finally {
      await receiver.close();
    }
  });
});
