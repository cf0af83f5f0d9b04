import { describe, expect, it } from 'vitest';
import { PaymentsClient } from '../../src/client/index';
import { decryptEnvelope } from '../../src/ciphers/envelope';
import type { CardPaymentRequest } from '../../src/client/index';

const encryptionKey = 'k'.repeat(32);
const card = { card_number: '4242424242424242', amount: 1050, currency: 'USD' } as CardPaymentRequest;

/** A client whose requests land here instead of on the network. */
function clientAndRequests() {
  const requests: { url: string; init: RequestInit }[] = [];
  const fetch = (async (url: URL, init: RequestInit) => {
    requests.push({ url: url.toString(), init });
    return new Response(
      '{"status":"SUCCESS","message":"ok","data":{"transaction_id":"PA1","order_id":null}}',
    );
  }) as typeof globalThis.fetch;
  const client = new PaymentsClient({
    baseUrl: 'https://payments.example',
    secretKey: 'PA_TEST_x',
    encryptionKey,
    fetch,
  });
  return { client, requests };
}

describe('the typed client', () => {
  it('sends a create encrypted, to its mode, with the Idempotency-Key only when given one', async () => {
    const { client, requests } = clientAndRequests();
    await client.card(card, { idempotencyKey: 'order-1-try' });
    await client.card(card);
    const [keyed, plain] = requests;
    expect(keyed!.url).toBe('https://payments.example/api/v1/test/card');
    expect(keyed!.init.headers).toMatchObject({
      'idempotency-key': 'order-1-try',
      authorization: 'Bearer PA_TEST_x',
    });
    expect(plain!.init.headers).not.toHaveProperty('idempotency-key');
    const { payload } = JSON.parse(String(keyed!.init.body)) as { payload: string };
    expect(JSON.parse(decryptEnvelope(payload, encryptionKey)!)).toEqual(card);
  });
});
