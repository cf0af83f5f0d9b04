import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import {
  cardRequest,
  encryptForMerchant,
  merchantClient,
  type MerchantClient,
} from '../helpers/merchant-client';

let env: TestEnv;
let merchant: MerchantClient;

beforeAll(async () => {
  env = await startTestEnv();
  merchant = merchantClient(env.app, await env.createMerchant());
});
afterAll(() => env?.close());

const send = (body: unknown, headers: Record<string, string> = {}) =>
  env.app.inject({
    method: 'POST',
    url: '/api/v1/test/card',
    headers: {
      authorization: `Bearer ${merchant.key('test')}`,
      'content-type': 'application/json',
      ...headers,
    },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('encrypted request envelope', () => {
  it('accepts a body encrypted by the openssl command line, exactly as the interface describes', async () => {
    const iv = randomBytes(16).toString('hex');
    const key = Buffer.from(merchant.credentials.encryption_key, 'utf8').toString('hex');
    const ciphertext = execFileSync('openssl', ['enc', '-aes-256-cbc', '-K', key, '-iv', iv], {
      input: JSON.stringify(cardRequest({ card_number: '4242424242424242', order_id: 'openssl-1' })),
    }).toString('hex');
    const response = await send({ payload: `${iv}:${ciphertext}` });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ status: 'SUCCESS', data: { order_id: 'openssl-1' } });
  });

  const key = () => merchant.credentials.encryption_key;
  const valid = () => encryptForMerchant(cardRequest(), key());
  it.each([
    ['a different key', () => encryptForMerchant(cardRequest(), 'x'.repeat(32))],
    ['bad hex', () => `zz${valid().slice(2)}`],
    ['an IV of 15 bytes', () => valid().slice(2)],
    ['ciphertext not a multiple of 16 bytes', () => `${valid()}00`],
    [
      'bad padding',
      () => {
        const v = valid();
        return `${v.slice(0, -2)}${v.endsWith('00') ? '01' : '00'}`;
      },
    ],
    ['text that is not JSON', () => encryptForMerchant('not json', key())],
    ['JSON that is not an object', () => encryptForMerchant('[1,2,3]', key())],
    ['a JSON string', () => encryptForMerchant('"hello"', key())],
    ['no separator', () => valid().replace(':', '')],
  ])('answers 400 for %s', async (_case, payload) => {
    const response = await send({ payload: payload() });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ message: 'Encryption Key is invalid.' });
  });

  it.each([
    ['no payload field', {}],
    ['a payload that is not a string', { payload: 42 }],
    ['a plain unencrypted body', cardRequest()],
  ])('answers 422 naming payload for %s', async (_case, body) => {
    const response = await send(body);
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toHaveProperty('payload');
    expect(response.json().message).toMatch(/payload/);
  });

  it('answers 400 for a body that is not JSON', async () => {
    const response = await send('{"payload": ');
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toBe('The request body is not valid JSON.');
  });

  it('answers 413 for a body over 64 KiB', async () => {
    const response = await send({ payload: 'a'.repeat(70 * 1024) });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({ message: 'Payload too large.' });
  });

  it('accepts the old encryption key during a rotation overlap, and the new one', async () => {
    const { rotateMerchantKeys } = await import('../../src/merchants/keys');
    const credentials = await env.createMerchant();
    const rotated = await rotateMerchantKeys(
      env.database.db,
      env.config.MASTER_KEY,
      credentials.merchant_id,
      1,
    );
    for (const key of [credentials.encryption_key, rotated.encryption_key]) {
      const response = await env.app.inject({
        method: 'POST',
        url: '/api/v1/test/card',
        headers: { authorization: `Bearer ${rotated.test_secret_key}`, 'content-type': 'application/json' },
        payload: { payload: encryptForMerchant(cardRequest(), key) },
      });
      expect(response.statusCode).toBe(200);
    }
  });

  it('ignores unknown query parameters', async () => {
    const response = await env.app.inject({
      method: 'POST',
      url: '/api/v1/test/crypto/currencies?Skip-Encryption=true',
      headers: { authorization: `Bearer ${merchant.key('test')}`, 'content-type': 'application/json' },
      payload: { country: 'US', amount: 100 },
    });
    expect(response.statusCode).toBe(200);
  });

  it('never writes the payload, the key or the card to the logs', async () => {
    await send({ payload: encryptForMerchant(cardRequest({ card_number: '4000000000000002' }), key()) });
    const logs = env.logs.join('\n');
    expect(logs).not.toContain(merchant.key('test'));
    expect(logs).not.toContain('4000000000000002');
    expect(logs).not.toContain(key());
  });
});
