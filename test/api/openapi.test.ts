import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { startTestEnv, type TestEnv } from '../helpers/env';
import {
  cardRequest,
  merchantClient,
  payinRequest,
  payoutRequest,
  rampRequest,
  type MerchantClient,
} from '../helpers/merchant-client';
import { startWebhookReceiver } from '../helpers/webhook-receiver';
import type { JsonSchema } from '../../src/api/openapi';
import { REQUEST_BODIES } from '../../src/schemas/requests';
import { referenceDocument } from '../../src/api/document';
import { addTemplate } from '../../src/transactions/links';
import { MODES } from '../../src/lib/vocabulary';
import { parseJsonExact } from '../../src/lib/json';
import { OPENAPI_FILE, openApiFileText } from '../../scripts/openapi';

/**
 * The OpenAPI document (openapi.json, served at /docs): current, valid, naming every route the app
 * serves, and true to what the API answers.
 */

/** This reference's own pages and files. */
const isDocs = (url: string) => url === '/docs' || url.startsWith('/docs/');

const document = (await referenceDocument()) as unknown as JsonSchema;
const schemas = (document.components as { schemas: Record<string, JsonSchema> }).schemas;
const operations = Object.entries(document.paths as Record<string, Record<string, JsonSchema>>).flatMap(
  ([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
);

let env: TestEnv;
let merchant: MerchantClient;

beforeAll(async () => {
  env = await startTestEnv();
  merchant = merchantClient(env.app, await env.createMerchant({ name: 'Reference Books' }));
});
afterAll(() => env?.close());

describe('openapi.json', () => {
  it('is what the code builds now', async () => {
    expect(readFileSync(OPENAPI_FILE, 'utf8'), 'openapi.json is out of date: run npm run openapi').toBe(
      await openApiFileText(),
    );
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')));
    expect(validator.version).toBe('3.1');
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });
});

/** `/api/v1/:mode/card` as a pattern: each parameter stands for one path segment. */
const routePattern = (url: string) =>
  new RegExp(`^${url.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+')}$`);

/** A documented path with its parameters filled in: every mode, and a stand-in for the rest. */
const pathSamples = (path: string) =>
  (path.includes('{mode}') ? MODES : ['']).map((mode) =>
    path.replace('{mode}', mode).replace(/\{\w+\}/g, 'x1'),
  );

describe('the document and the routes', () => {
  const served = () =>
    env.app.servedRoutes
      .filter(({ method, url }) => method !== 'HEAD' && method !== 'OPTIONS' && !isDocs(url))
      .map(({ method, url, route }) => ({
        method,
        url,
        page: route.config?.page === true,
        listed: route.config?.reference !== undefined,
        unlisted: route.config?.unlisted,
      }));

  it('documents every route the app serves, with its method, but the hosted pages and the codec', () => {
    expect(served().length).toBeGreaterThan(30);
    // A route stays out only as a hosted page, or by saying why (the codec, the sandbox's webhook).
    const left = served().filter(({ listed }) => !listed);
    expect(left.filter(({ page, unlisted }) => !page && !unlisted)).toEqual([]);
    expect(left.filter(({ page }) => page).length).toBeGreaterThanOrEqual(9);
    const missing = served()
      .filter(({ listed }) => listed)
      .filter(
        ({ method, url }) =>
          !operations.some(
            (o) =>
              o.method === method.toLowerCase() && pathSamples(o.path).some((p) => routePattern(url).test(p)),
          ),
      );
    expect(missing).toEqual([]);
  });

  it('documents no route the app does not serve', () => {
    const unserved = operations.filter(
      (o) =>
        !pathSamples(o.path).every((sample) =>
          served().some((r) => r.method.toLowerCase() === o.method && routePattern(r.url).test(sample)),
        ),
    );
    expect(unserved.map((o) => `${o.method} ${o.path}`)).toEqual([]);
  });

  it("lists the vendor SDK's post-payment calls and the envelope's error", () => {
    for (const [method, path] of [
      ['get', '/api/{mode}/status/{id}'],
      ['post', '/api/v1/{mode}/refund'],
      ['post', '/api/v1/test/chargeback'],
      ['get', '/api/v1/{mode}-transactions'],
      ['get', '/api/v1/{mode}-wallet-transactions'],
      ['get', '/api/v1/{mode}/payout/{id}/status'],
      ['post', '/api/v1/wallet/estimate-payout'],
      ['get', '/api/v1/{mode}/webhooks/events'],
      ['post', '/api/v1/{mode}/webhooks/events/{event_id}/redeliver'],
    ] as const)
      expect(
        operations.some((o) => o.method === method && o.path === path),
        `${method} ${path}`,
      ).toBe(true);
    expect(JSON.stringify(document)).toContain('Encryption Key is invalid.');
  });
});

describe('the request schemas', () => {
  it('describe every field', () => {
    for (const name of REQUEST_BODIES.keys()) {
      const properties = schemas[name]!.properties as Record<string, JsonSchema>;
      for (const [field, schema] of Object.entries(properties))
        expect(schema.description, `${name}.${field}`).toMatch(/\w/);
    }
  });

  it('have examples the routes accept', () => {
    // On a fixed day: the card example's expiry is a fixed year, and openapi.json must not change with the
    // calendar. Move both on when the example nears its expiry.
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-24T00:00:00Z') });
    try {
      for (const [name, schema] of REQUEST_BODIES) {
        const [example] = schemas[name]!.examples as unknown[];
        // Read as the API reads a body: numbers kept exact.
        const body = parseJsonExact(JSON.stringify(example));
        expect(schema.safeParse(body).error, name).toBeUndefined();
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('show the limits and rules the validators apply', () => {
    const card = schemas.CardRequest!.properties as Record<string, JsonSchema>;
    // Plain text is a schema of its own, named on each field that takes it.
    expect(card.first_name).toMatchObject({
      $ref: '#/components/schemas/PlainText',
      minLength: 1,
      maxLength: 191,
    });
    expect(card.email!.description).toContain('Must be a valid email address.');
    expect(card.amount).toMatchObject({ type: ['integer', 'string'], minimum: 1 });
    // Each pattern takes exactly what its validator takes: the conformance test (test/conformance)
    // generates from them; here a few values each way.
    const matches = (schema: JsonSchema, value: string) =>
      new RegExp(schema.pattern as string, 'u').test(value);
    for (const ok of ['1050', ' 0001050 ', '999999999999999999'])
      expect(matches(card.amount!, ok), ok).toBe(true);
    for (const bad of ['0', '000', '10.5', '1e3', '1000000000000000000'])
      expect(matches(card.amount!, bad), bad).toBe(false);
    expect(card.country).toMatchObject({ $ref: '#/components/schemas/CountryCodeAlpha2Or3' });
    expect(matches(card.phone_number!, '+12025550123')).toBe(true);
    expect(matches(card.phone_number!, '12345')).toBe(false);
    expect(matches(schemas.PlainText!, 'Jane')).toBe(true);
    for (const bad of ['   ', 'Ja\u0001ne']) expect(matches(schemas.PlainText!, bad), bad).toBe(false);
    // An optional field may be null or blank, which the API reads as left out.
    expect(card.order_id!.anyOf).toContainEqual({ type: 'null' });
    const payin = schemas.PayinRequest!.properties as Record<string, JsonSchema>;
    expect(payin.amount).toMatchObject({ type: ['number', 'string'] });
    const ramp = schemas.RampRequest!.properties as Record<string, JsonSchema>;
    expect(ramp.first_name).toMatchObject({ minLength: 3, maxLength: 191 });
    expect(ramp.first_name!.description).toContain('Must be letters only.');
  });

  it("show an encrypted endpoint's plaintext fields inside its envelope", () => {
    const card = operations.find((o) => o.path === '/api/v1/{mode}/card')!.operation;
    const body = (card.requestBody as JsonSchema).content as Record<string, { schema: JsonSchema }>;
    const payload = (body['application/json']!.schema.properties as Record<string, JsonSchema>).payload!;
    expect(payload.contentSchema).toEqual({ $ref: '#/components/schemas/CardRequest' });
    expect(body['application/json']!.schema.required).toEqual(['payload']);
  });
});

/**
 * The document's answer schemas with every object closed, so a field the API sends and the document
 * does not name fails too.
 */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema))
    out[key] =
      key === 'properties'
        ? Object.fromEntries(Object.entries(value as object).map(([name, s]) => [name, closed(s)]))
        : closed(value);
  if ('properties' in out && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

describe('what the API answers', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi', components: closed(document.components) });
  const expectShape = (name: string, body: unknown) => {
    const validate = ajv.getSchema(`openapi#/components/schemas/${name}`)!;
    expect(validate(body) ? [] : validate.errors, name).toEqual([]);
  };

  it('matches the documented answers: creates, lookups, lists, wallets, links, deposits, errors', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const card = await merchant.post(
        '/api/v1/test/card',
        cardRequest({ order_id: 'openapi-card', webhook_url: receiver.url }),
      );
      expectShape('CardTransaction', card.json());
      const id = card.json().data.transaction_id;
      expectShape('Transaction', (await merchant.get(`/api/test/status/${id}`)).json());

      const wallets = await merchant.get('/api/v1/wallet');
      expectShape('WalletList', wallets.json());
      const wallet = merchant.credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!;
      const payout = await merchant.post('/api/v1/test/payout', payoutRequest(wallet.wallet_id));
      expectShape('PayoutTransaction', payout.json());
      const payoutId = payout.json().data.transaction_id;
      expectShape('PayoutTransaction', (await merchant.get(`/api/v1/test/payout/${payoutId}/status`)).json());
      const estimate = await merchant.post('/api/v1/wallet/estimate-payout', {
        wallet_id: wallet.wallet_id,
        amount: 500,
        card_number: '4222222222222222',
      });
      expectShape('PayoutEstimate', estimate.json());

      const ramp = await merchant.post('/api/v1/test/crypto', rampRequest());
      expectShape('RampTransaction', ramp.json());
      const payin = await merchant.post('/api/v1/test/crypto/payin', payinRequest());
      expectShape('PayinTransaction', payin.json());
      const deposit = await merchant.postPlain(
        `/api/v1/test/crypto/${payin.json().data.transaction_id}/deposit`,
        { amount: '10' },
      );
      expectShape('DepositAnswer', deposit.json());
      const currencies = await merchant.postPlain('/api/v1/test/crypto/currencies', {
        country: 'US',
        amount: 100,
      });
      expectShape('CurrencyList', currencies.json());

      await addTemplate(env.database.db, {
        merchantId: merchant.credentials.merchant_id,
        mode: 'test',
        name: 'Standard',
        redirectUrl: 'https://shop.example/return',
      });
      const templates = await merchant.get('/api/v1/payment-templates');
      expectShape('TemplateList', templates.json());
      const link = await merchant.postPlain('/api/v1/payment-link', {
        payment_template_id: templates.json().data[0].payment_template_id,
        amount: 1050,
        currency: 'USD',
      });
      expectShape('PaymentLink', link.json());

      const [webhook] = await receiver.waitFor(1);
      expectShape('WebhookPayload', webhook!.json);
      for (const header of ['fs-webhook-hash', 'webhook-id', 'webhook-timestamp', 'webhook-signature'])
        expect(webhook!.headers[header], header).toBeDefined();

      const refund = await merchant.postPlain('/api/v1/test/refund', { transaction_id: id, reason: 'Test' });
      expectShape('Transaction', refund.json());
      expectShape('TransactionPage', (await merchant.get('/api/v1/test-transactions?limit=2')).json());
      expectShape('WalletTransactionPage', (await merchant.get('/api/v1/test-wallet-transactions')).json());
      const events = await merchant.get(`/api/v1/test/webhooks/events?transaction_id=${id}`);
      expectShape('WebhookEventPage', events.json());
      const eventId = events.json().data[0].event_id;
      const redelivered = await merchant.postPlain(`/api/v1/test/webhooks/events/${eventId}/redeliver`, {});
      expectShape('WebhookEventAnswer', redelivered.json());

      for (const refused of [
        await env.app.inject({ url: '/api/test/status/x' }),
        await merchant.post('/api/v1/test/card', cardRequest({ email: 'not an email' })),
        await merchant.get('/api/test/status/PAnotatransactionnotatransaction'),
      ])
        expectShape('Error', refused.json());
      expectShape('Health', (await env.app.inject({ url: '/healthz' })).json());
      expectShape('Readiness', (await env.app.inject({ url: '/readyz' })).json());
    } finally {
      await receiver.close();
    }
  });
});

describe('GET /docs', () => {
  it('serves the reference page and, at /docs/json, the document with this service as its server', async () => {
    const page = await env.app.inject({ url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.body).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(page.body).toContain('swagger-ui-bundle.js');

    const json = await env.app.inject({ url: '/docs/json' });
    expect(json.statusCode).toBe(200);
    const served = json.json();
    expect(served.servers).toEqual([{ url: env.config.baseUrl }]);
    expect({ ...served, servers: document.servers }).toEqual(document);
  });
});
