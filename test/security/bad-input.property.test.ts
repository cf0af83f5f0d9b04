/**
 * Generated bad input against every endpoint, envelope and path parameter: never a 5xx, always the
 * contract's error shape, nothing written for a refused request. Prints how many cases ran.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import {
  cardRequest,
  encryptForMerchant,
  merchantClient,
  payinRequest,
  payoutRequest,
  rampRequest,
  type MerchantClient,
} from '../helpers/merchant-client';

const RUNS = Number(process.env.BAD_INPUT_RUNS ?? 1);
let env: TestEnv;
let merchant: MerchantClient;
let walletId: string;
let cases = 0;
const fiveHundreds: string[] = [];

beforeAll(async () => {
  env = await startTestEnv({
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
    BODY_LIMIT_BYTES: '65536',
  });
  const credentials = await env.createMerchant({ wallets: [{ currency: 'USD', amount: 1_000_000n }] });
  merchant = merchantClient(env.app, credentials);
  walletId = ((await merchant.get('/api/v1/wallet')).json() as { data: { wallet_id: string }[] }).data[0]!
    .wallet_id;
});
afterAll(async () => {
  process.stdout.write(`\n[bad-input] ${cases} generated cases, ${fiveHundreds.length} answered 5xx\n`);
  await env?.close();
});

/**
 * Transactions are the one thing a create writes before it answers (ledger entries and webhook events
 * follow later from the workflows of earlier, valid requests, so they cannot be counted per request).
 */
const written = async () =>
  Number((await env.database.pool.query('select count(*) as n from transactions')).rows[0].n);

/** The contract's answer to anything: JSON with a `message`, never a 5xx; nothing kept when refused. */
async function expectContractAnswer(
  send: () => Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }>,
  what: string,
) {
  cases += 1;
  const before = await written();
  const response = await send();
  if (response.statusCode >= 500)
    fiveHundreds.push(`${what}: ${response.statusCode} ${response.body.slice(0, 200)}`);
  expect(response.statusCode, `${what}: ${response.body.slice(0, 300)}`).toBeLessThan(500);
  if (String(response.headers['content-type']).startsWith('application/json')) {
    const body = JSON.parse(response.body) as Record<string, unknown>;
    if (response.statusCode >= 400) {
      expect(typeof body.message).toBe('string');
      expect(response.body.length).toBeLessThan(20_000);
      expect(await written(), `${what} was refused but wrote something`).toBe(before);
    }
  }
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
}

/** Text from every Unicode plane, with what breaks naive code: NUL, controls, lone surrogates, RTL marks. */
const nastyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc
    .array(
      fc.constantFrom(
        '\u0000',
        '\u001b',
        '\u0085',
        '\uD800',
        '\uDFFF',
        '\u202E',
        '\uFEFF',
        '\u2028',
        '%00',
        '"',
        "'",
        '<',
        '\\',
        'é',
        '𝄞',
        'a',
      ),
      { maxLength: 12 },
    )
    .map((parts) => parts.join('')),
  fc.integer({ min: 190, max: 5000 }).map((n) => 'x'.repeat(n)),
);

/** Any JSON-ish value a merchant's bug could send in a field. */
const anyValue = fc.oneof(
  nastyText,
  fc.integer(),
  fc.double(),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map((n) => ({ raw: n.toString() })),
  fc.constantFrom(null, true, false, [], {}, 1e308, -1, 0, '1e400', 'NaN', 'Infinity', '-0', '0x10', ' 12 '),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
);

/** Serialises with `raw` numbers written as bare digits (JSON.stringify cannot write a bigint). */
const toJson = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && 'raw' in v ? `__RAW__${(v as { raw: string }).raw}__RAW__` : v,
  ).replace(/"__RAW__(-?\d+)__RAW__"/g, '$1');

const endpoints = {
  card: { path: '/api/v1/test/card', valid: () => cardRequest() },
  payout: { path: '/api/v1/test/payout', valid: () => payoutRequest(walletId) },
  ramp: { path: '/api/v1/test/crypto', valid: () => rampRequest() },
  payin: { path: '/api/v1/test/crypto/payin', valid: () => payinRequest() },
  currencies: { path: '/api/v1/test/crypto/currencies', valid: () => ({ country: 'US', amount: 100 }) },
} as const;

const postEncrypted = (path: string, json: string) =>
  merchant.postPlain(path, { payload: encryptForMerchant(json, merchant.credentials.encryption_key) });

describe('generated bad input', () => {
  it.each(Object.entries(endpoints))(
    '%s: a valid request with fields replaced, removed or added',
    async (name, endpoint) => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.tuple(
              fc.oneof(
                fc.constantFrom(...Object.keys(endpoint.valid())),
                fc.constantFrom('__proto__', 'constructor', 'prototype', 'extra'),
              ),
              fc.option(anyValue, { nil: undefined }),
            ),
            { minLength: 0, maxLength: 2 },
          ),
          fc.tuple(fc.constantFrom(...Object.keys(endpoint.valid())), anyValue),
          async (others, replaced) => {
            // At least one field replaced by a generated value; more replaced, removed or added.
            const changes = [replaced as [string, unknown], ...others];
            const fields: Record<string, unknown> = {
              ...endpoint.valid(),
              order_id: `p-${Math.random().toString(36).slice(2)}`,
            };
            if (name === 'currencies') delete fields.order_id;
            for (const [key, value] of changes) {
              if (value === undefined) delete fields[key];
              else
                Object.defineProperty(fields, key, {
                  value,
                  enumerable: true,
                  configurable: true,
                  writable: true,
                });
            }
            await expectContractAnswer(
              () => postEncrypted(endpoint.path, toJson(fields)),
              `${name} ${toJson(changes).slice(0, 200)}`,
            );
          },
        ),
        { numRuns: 1000 * RUNS },
      );
    },
    600_000,
  );

  it('the envelope: random payloads, odd or non-hex text, wrong IV lengths, ciphertext of non-JSON, deep nesting', async () => {
    const hex = (min: number, max: number) =>
      fc.uint8Array({ minLength: min, maxLength: max }).map((b) => Buffer.from(b).toString('hex'));
    const payload = fc.oneof(
      nastyText,
      fc.tuple(hex(0, 40), hex(0, 80)).map(([iv, c]) => `${iv}:${c}`),
      fc.tuple(hex(16, 16), hex(16, 64)).map(([iv, c]) => `${iv}:${c}x`),
      fc.tuple(hex(15, 17), hex(16, 64)).map(([iv, c]) => `${iv}:${c}`),
      hex(0, 64),
      fc
        .string({ maxLength: 200 })
        .map((text) => encryptForMerchant(text, merchant.credentials.encryption_key)),
      fc
        .integer({ min: 1, max: 5000 })
        .map((depth) =>
          encryptForMerchant(`${'['.repeat(depth)}${']'.repeat(depth)}`, merchant.credentials.encryption_key),
        ),
      fc
        .integer({ min: 1, max: 5000 })
        .map((depth) =>
          encryptForMerchant(
            `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
            merchant.credentials.encryption_key,
          ),
        ),
      fc.constantFrom(
        encryptForMerchant(
          '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}',
          merchant.credentials.encryption_key,
        ),
        encryptForMerchant('{"amount":1e999999}', merchant.credentials.encryption_key),
        encryptForMerchant('{"amount":-0}', merchant.credentials.encryption_key),
      ),
    );
    const body = fc.oneof(
      payload.map((p) => JSON.stringify({ payload: p })),
      anyValue.map((v) => toJson({ payload: v })),
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.integer({ min: 60_000, max: 200_000 }).map((n) => JSON.stringify({ payload: 'a'.repeat(n) })),
    );
    const path = fc.constantFrom(
      ...Object.values(endpoints).map((e) => e.path),
      '/api/v1/test/crypto/PA1/deposit',
    );
    await fc.assert(
      fc.asyncProperty(path, body, async (url, raw) => {
        await expectContractAnswer(
          () =>
            env.app.inject({
              method: 'POST',
              url,
              headers: {
                authorization: `Bearer ${merchant.key('test')}`,
                'content-type': 'application/json',
              },
              payload: raw,
            }),
          `${url} ${raw.slice(0, 120)}`,
        );
      }),
      { numRuns: 3000 * RUNS },
    );
  }, 600_000);

  it('path parameters and URLs: any text, percent-encoding errors, over-long paths', async () => {
    const segment = fc.oneof(
      nastyText.map((t) => encodeURIComponent(t.replace(/[\uD800-\uDFFF]/g, ''))),
      nastyText.map((t) => Buffer.from(t, 'utf8').toString('hex').replace(/(..)/g, '%$1')),
      fc.constantFrom('%', '%0', '%zz', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%FF', '..%2F..%2Fetc', '%2e%2e'),
      fc.integer({ min: 100, max: 9000 }).map((n) => 'P'.repeat(n)),
    );
    const template = fc.constantFrom(
      (s: string) => `/api/test/status/${s}`,
      (s: string) => `/api/${s}/status/PA1`,
      (s: string) => `/api/v1/test/crypto/${s}/deposit`,
      (s: string) => `/api/v1/test/card/checkout/${s}`,
      (s: string) => `/api/v1/live/crypto/checkout/${s}`,
      (s: string) => `/api/v1/test/payout/verification/${s}`,
      (s: string) => `/api/v1/${s}/card`,
    );
    await fc.assert(
      fc.asyncProperty(template, segment, fc.constantFrom('GET', 'POST'), async (url, s, method) => {
        await expectContractAnswer(
          () =>
            env.app.inject({
              method: method as 'GET' | 'POST',
              url: url(s),
              headers: {
                authorization: `Bearer ${merchant.key('test')}`,
                'content-type': 'application/json',
              },
              ...(method === 'POST' ? { payload: '{}' } : {}),
            }),
          `${method} ${url(s).slice(0, 200)}`,
        );
      }),
      { numRuns: 3000 * RUNS },
    );
    expect(cases).toBeGreaterThan(0);
  }, 600_000);

  it('ran at least 10,000 generated cases, none answered with a 5xx', () => {
    expect(fiveHundreds).toEqual([]);
    expect(cases).toBeGreaterThanOrEqual(10_000 * RUNS);
  });
});
