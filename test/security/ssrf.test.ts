import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { startWebhookReceiver } from '../helpers/webhook-receiver';
import {
  cardRequest,
  merchantClient,
  payinRequest,
  payoutRequest,
  rampRequest,
  type MerchantClient,
} from '../helpers/merchant-client';
import type { Resolver } from '../../src/net/address-policy';

// `hooks.merchant.example` is public when the transaction is created and points at loopback by the time
// its webhook is delivered: the DNS rebinding the delivery-time check exists for.
const answers =
  (address: string): Resolver =>
  async (host) => {
    if (host.endsWith('.invalid')) throw Object.assign(new Error('no such host'), { code: 'ENOTFOUND' });
    if (host === 'dns-down.example') throw Object.assign(new Error('try again'), { code: 'EAI_AGAIN' });
    return [{ address: host === 'hooks.merchant.example' ? address : '93.184.216.34', family: 4 }];
  };

let env: TestEnv;
let merchant: MerchantClient;
let walletId: string;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  env = await startTestEnv({}, { resolve: answers('127.0.0.1') }, { resolve: answers('93.184.216.34') });
  const credentials = await env.createMerchant({ wallets: [{ currency: 'USD', amount: 1_000_000n }] });
  merchant = merchantClient(env.app, credentials);
  const wallets = (await merchant.get('/api/v1/wallet', { key: merchant.key('live') })).json() as {
    data: { wallet_id: string }[];
  };
  walletId = wallets.data[0]!.wallet_id;
});
afterAll(async () => {
  await env?.close();
  await receiver?.close();
});

const liveRequests = {
  card: (url: Record<string, string>) => ['/api/v1/live/card', cardRequest(url)] as const,
  payout: (url: Record<string, string>) =>
    ['/api/v1/live/payout', payoutRequest(walletId, { card_number: '4111111111111111', ...url })] as const,
  ramp: (url: Record<string, string>) => ['/api/v1/live/crypto', rampRequest(url)] as const,
  payin: (url: Record<string, string>) => ['/api/v1/live/crypto/payin', payinRequest(url)] as const,
};

describe('live-mode URLs that reach an internal host are refused when the transaction is created', () => {
  const hosts = [
    '[::7f00:1]',
    '[::127.0.0.1]',
    '[64:ff9b::7f00:1]',
    '[2002:7f00:1::]',
    '[::ffff:127.0.0.1]',
    '[::ffff:a9fe:a9fe]',
    '[64:ff9b:1::1]',
    '127.0.0.1',
    '[::1]',
    'localhost',
  ];
  const fields = ['webhook_url', 'redirect_url'] as const;
  const cases = Object.keys(liveRequests).flatMap((kind) =>
    hosts.flatMap((host) => fields.map((field) => [kind as keyof typeof liveRequests, field, host] as const)),
  );
  it.each(cases.filter(([kind, field]) => !(kind === 'payout' && field === 'redirect_url')))(
    '%s %s http://%s/',
    async (kind, field, host) => {
      const [path, body] = liveRequests[kind]({ [field]: `http://${host}/hook` });
      const response = await merchant.post(path, body);
      expect(response.statusCode, response.body).toBe(422);
      expect((response.json() as { errors: Record<string, string[]> }).errors[field]).toEqual([
        `The ${field.replace('_', ' ')} must not point to a private or loopback address.`,
      ]);
    },
  );
});

describe('host names that cannot be judged', () => {
  it('a name that does not resolve is a 422 that says so; a DNS that does not answer is a 503', async () => {
    const missing = await merchant.post(
      '/api/v1/live/card',
      cardRequest({ webhook_url: 'https://shop.invalid/hook' }),
    );
    expect(missing.statusCode).toBe(422);
    expect(missing.json().errors.webhook_url).toEqual(['The webhook url host name does not resolve.']);
    const down = await merchant.post(
      '/api/v1/live/card',
      cardRequest({ redirect_url: 'https://dns-down.example/done' }),
    );
    expect(down.statusCode).toBe(503);
    expect(down.headers['retry-after']).toBe('5');
  });
});

describe('the guard holds again at delivery', () => {
  it('a webhook host that resolves to loopback at delivery is not called, and the attempt says why', async () => {
    const port = new URL(receiver.url).port;
    const created = await merchant.post(
      '/api/v1/live/card',
      cardRequest({ webhook_url: `http://hooks.merchant.example:${port}/webhooks` }),
    );
    expect(created.statusCode, created.body).toBe(200);
    const transactionId = (created.json() as { data: { transaction_id: string } }).data.transaction_id;
    await expect
      .poll(
        async () =>
          (
            await env.database.pool.query(
              `select a.error from webhook_attempts a join webhook_events e on e.id = a.event_id
               where e.transaction_id = $1`,
              [transactionId],
            )
          ).rows.map((row: { error: string }) => row.error),
        { timeout: 30_000, interval: 100 },
      )
      .toContain('webhook_url resolves to a private or loopback address');
    expect(receiver.received).toHaveLength(0);
  });
});
