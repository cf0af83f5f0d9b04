import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { merchantClient, type MerchantClient } from '../helpers/merchant-client';

let env: TestEnv;
let merchant: MerchantClient;

beforeAll(async () => {
  env = await startTestEnv();
  merchant = merchantClient(env.app, await env.createMerchant());
});
afterAll(() => env?.close());

const list = (body: unknown, mode = 'test') => merchant.postPlain(`/api/v1/${mode}/crypto/currencies`, body);

describe('POST /api/v1/{mode}/crypto/currencies', () => {
  it('lists the catalogue for a country and amount, several networks for USDT', async () => {
    const response = await list({ country: 'US', amount: 100 });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.message).toBeTypeOf('string');
    const usdt = body.data.find((c: { code: string }) => c.code === 'USDT');
    expect(usdt).toEqual({
      code: 'USDT',
      name: 'Tether USD',
      symbol: 'USDT',
      networks: ['ETHEREUM', 'TRON', 'POLYGON', 'SOLANA', 'AVALANCHE'],
    });
    expect(body.data.find((c: { code: string }) => c.code === 'BTC')).toMatchObject({ name: 'Bitcoin' });
    expect(body.data.map((c: { code: string }) => c.code)).toEqual(['BTC', 'ETH', 'USDT', 'TRX']);
  });

  it('honours country restrictions: BNB is not offered in the US, USDT on OMNI only where allowed', async () => {
    const us = (await list({ country: 'US', amount: 1000 })).json().data;
    const gb = (await list({ country: 'GB', amount: 1000 })).json().data;
    expect(us.map((c: { code: string }) => c.code)).not.toContain('BNB');
    expect(gb.map((c: { code: string }) => c.code)).toContain('BNB');
    expect(gb.find((c: { code: string }) => c.code === 'USDT').networks).toContain('OMNI');
    expect(us.find((c: { code: string }) => c.code === 'USDT').networks).not.toContain('OMNI');
    expect((await list({ country: 'KP', amount: 100 })).json().data).toEqual([]);
  });

  it('never offers OMNI in live mode, even where the sandbox chain may stand in for a node', async () => {
    const live = (await list({ country: 'GB', amount: 1000 }, 'live')).json().data as {
      code: string;
      networks: string[];
    }[];
    const test = (await list({ country: 'GB', amount: 1000 })).json().data as {
      code: string;
      networks: string[];
    }[];
    expect(test.find((c) => c.code === 'USDT')!.networks).toContain('OMNI');
    expect(live.find((c) => c.code === 'USDT')!.networks).toEqual(
      test.find((c) => c.code === 'USDT')!.networks.filter((n) => n !== 'OMNI'),
    );
    expect(live.map((c) => c.code)).toEqual(test.map((c) => c.code));
  });

  it('honours amount limits', async () => {
    const small = (await list({ country: 'GB', amount: '5' })).json().data;
    expect(small.map((c: { code: string }) => c.code)).toEqual(['USDT', 'TRX']);
    const large = (await list({ country: 'GB', amount: 75000 })).json().data;
    expect(large.map((c: { code: string }) => c.code)).toEqual(['BTC', 'ETH', 'USDT']);
    const exactMin = (await list({ country: 'GB', amount: 20 })).json().data;
    expect(exactMin.map((c: { code: string }) => c.code)).toContain('BTC');
  });

  it('reads the catalogue from Postgres, not from code', async () => {
    await env.database.db.execute(sql`update crypto_assets set active = false where code = 'TRX'`);
    const data = (await list({ country: 'US', amount: 100 })).json().data;
    expect(data.map((c: { code: string }) => c.code)).not.toContain('TRX');
    await env.database.db.execute(sql`update crypto_assets set active = true where code = 'TRX'`);
  });

  it.each([
    [{ amount: 100 }, 'country', 'The country field is required.'],
    [
      { country: 'USA', amount: 100 },
      'country',
      'The country field must be a valid ISO 3166-1 alpha-2 country code.',
    ],
    [
      { country: 'XX', amount: 100 },
      'country',
      'The country field must be a valid ISO 3166-1 alpha-2 country code.',
    ],
    [{ country: 'US' }, 'amount', 'The amount field is required.'],
    [{ country: 'US', amount: -5 }, 'amount', 'The amount field must be a positive number.'],
    [{ country: 'US', amount: 0 }, 'amount', 'The amount field must be a positive number.'],
    [{ country: 'US', amount: 'ten' }, 'amount', 'The amount field must be a positive number.'],
    [{ country: 'US', amount: 1e30 }, 'amount', 'The amount field must be a positive number.'],
  ])('answers 422 for %j', async (body, field, message) => {
    const response = await list(body);
    expect(response.statusCode).toBe(422);
    expect(response.json().message).toBe(message);
    expect(response.json().errors[field]).toContain(message);
  });

  it('answers 422 for a body that is not an object', async () => {
    const response = await list([1, 2]);
    expect(response.statusCode).toBe(422);
  });
});
