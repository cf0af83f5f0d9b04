import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPayloadConverter } from '@temporalio/common';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { payloadCodec } from '../../src/temporal/client';

let env: TestEnv;
const token = 'codec-token-for-tests-0123456789';

beforeAll(async () => {
  env = await startTestEnv({ CODEC_TOKEN: token });
});
afterAll(() => env?.close());

const wire = (p: {
  metadata?: Record<string, Uint8Array | null | undefined> | null;
  data?: Uint8Array | null;
}) => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v!).toString('base64')]),
  ),
  data: Buffer.from(p.data!).toString('base64'),
});

describe('codec endpoint for the Temporal UI', () => {
  it('decodes payloads for a caller with the codec token', async () => {
    const [encoded] = await payloadCodec(env.config).encode([
      defaultPayloadConverter.toPayload({ last4: '4242' }),
    ]);
    const response = await env.app.inject({
      method: 'POST',
      url: '/codec/decode',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        origin: 'http://localhost:8233',
      },
      payload: { payloads: [wire(encoded!)] },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBe('http://localhost:8233');
    const data = Buffer.from(response.json().payloads[0].data, 'base64').toString();
    expect(JSON.parse(data)).toEqual({ last4: '4242' });
  });

  it('answers an empty list as the Temporal CLI sends it, `{}` (workflow show of an event without payloads)', async () => {
    for (const action of ['decode', 'encode']) {
      const response = await env.app.inject({
        method: 'POST',
        url: `/codec/${action}`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: {},
      });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toEqual({ payloads: [] });
    }
  });

  it('refuses callers without the token or with a wrong one', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token' }]) {
      const response = await env.app.inject({
        method: 'POST',
        url: '/codec/decode',
        headers: { 'content-type': 'application/json', ...headers },
        payload: { payloads: [] },
      });
      expect(response.statusCode).toBe(401);
    }
  });

  it('answers CORS preflight for the UI origin only', async () => {
    const ok = await env.app.inject({
      method: 'OPTIONS',
      url: '/codec/decode',
      headers: { origin: 'http://localhost:8233' },
    });
    expect(ok.headers['access-control-allow-origin']).toBe('http://localhost:8233');
    const other = await env.app.inject({
      method: 'OPTIONS',
      url: '/codec/decode',
      headers: { origin: 'https://evil.example' },
    });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});
