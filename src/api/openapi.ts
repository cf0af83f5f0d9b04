import type { SwaggerTransformObject } from '@fastify/swagger';
import type { OpenAPIV3_1 } from 'openapi-types';
import { errorExamples, errorTable } from './reference/errors';
import { componentSchemas, ref, type JsonSchema } from './reference/schemas';
import { placeOperations } from './reference/operations';
import { ENVELOPE_PAYLOAD } from './reference/envelope';

export type { JsonSchema };

/**
 * The OpenAPI 3.1 document of the merchant API, served at /docs and written to openapi.json (`npm run
 * openapi`): its prose, tags, security, envelope and webhook. Each operation comes from its route's own
 * declaration (src/api/reference/operations.ts), the fields and answers from their zod schemas
 * (src/api/reference/schemas.ts).
 */

const TAGS = [
  {
    name: 'Card payments',
    description: 'Card payments from raw card data, hosted card payments and alternative payment methods.',
  },
  { name: 'Payouts and wallets', description: 'Card payouts from merchant wallets, and the wallets.' },
  { name: 'Crypto', description: 'Crypto on/off-ramps and payins (settlement: docs/settlement.md).' },
  { name: 'Transactions', description: 'Status lookups, refunds, chargebacks and the transaction lists.' },
  { name: 'Payment links', description: 'Payment page templates and links (docs/hosted.md).' },
  { name: 'Webhook events', description: 'The webhook event log and redelivery (docs/webhooks.md).' },
  { name: 'Operations', description: 'Probes and metrics for operators; no key needed.' },
] as const;

/** The groups operations are listed in (a route's `schema.tags`). */
export type Tag = (typeof TAGS)[number]['name'];

const DESCRIPTION =
  () => `Card payments (raw card data, or typed by the customer on our hosted page), alternative payment \
methods, card payouts from merchant wallets, crypto ramps and payins, refunds, chargebacks, transaction lists \
and signed webhooks. Generated from the validators the service runs; docs/api.md has the narrative.

## Authentication and modes

Every call carries \`Authorization: Bearer <secret key>\`. A merchant has a test key (\`PA_TEST_…\`) and a live \
key (\`PA_LIVE_…\`). Paths carry the mode (\`/api/v1/test/card\`, \`/api/live/status/{id}\`, \
\`/api/v1/test-transactions\`) and a key works only on its own mode's paths (\`401 Invalid Secret Key.\` \
otherwise); paths without a mode (\`/api/v1/wallet\`, payment links) take it from the key. Test and live data \
never mix.

## The encrypted envelope

Card payments, hosted card payments, APM, payouts, the payout estimate, ramps and payins take their fields \
encrypted (refunds, chargebacks and payment links take them plain or encrypted):

    {"payload": "<iv as hex>:<ciphertext as hex>"}

1. Serialize the endpoint's fields (the \`contentSchema\` of \`payload\`) as a JSON object.
2. Draw a fresh random 16-byte IV for every request.
3. Encrypt the text with AES-256-CBC and PKCS#7 padding, keyed with the UTF-8 bytes of the merchant's \
32-character encryption key.
4. Send the IV and the ciphertext in hex, joined by \`:\`, with \`Content-Type: application/json\`.

Anything that does not decrypt to a JSON object with the merchant's key is \`400 Encryption Key is invalid.\`, \
whichever step failed; a body without a string \`payload\` is a \`422\`; a plain body is refused where the \
envelope is required. \`npx payments encrypt --key <encryption key> --data '<fields as JSON>'\` prints a body.

## Fields and numbers

Text fields are trimmed; text with control characters or invalid Unicode is refused. Unknown fields and \
unknown query parameters (such as the vendor SDK's \`?Skip-Encryption=true\`) are ignored, and an optional \
field sent as \`null\` or \`""\` counts as absent. Money never passes through a binary float: card and payout \
amounts are integers in the currency's minor units, answered as exact JSON integers (also above 2^53); crypto \
and ramp amounts are decimals in major units, taken as JSON numbers or numeric strings and answered as exact \
JSON numbers. Parse answers with a JSON parser that keeps numbers exact.

## Transactions

Creates, status lookups and webhooks share one body: \`status\`, \`message\`, \`redirect_url\` while a hosted \
page waits, and \`data\`. \`SUCCESS\`, \`FAILED\` and \`BLOCKED\` are final and never change. A declined or \
blocked transaction is not an error: it answers \`200\`. A create waits a few seconds at most for the first \
answer; past that it answers \`PENDING\`, and the status endpoint and the webhook carry the outcome. A create \
repeating an \`order_id\` with the same fields answers the original transaction with \
\`Idempotent-Replayed: true\`; with other fields it is \`409\`. So does one repeating its \`Idempotency-Key\` \
header (1 to 255 visible ASCII characters, kept per merchant and mode for 24 hours), with or without an \
\`order_id\`.

## Errors

Every error body has a \`message\`; a \`422\` adds \`errors\`, every failing field with its messages.

${errorTable()}

## Rate limits

By default 100 requests per second per secret key with bursts of 200, shared by every API process; past it, \
\`429 Too Many Attempts.\` with \`Retry-After\`.`;

const WEBHOOK_DESCRIPTION = `Sent to the transaction's \`webhook_url\` when it moves into a final status, and \
again when a settled transaction is refunded or charged back (under a new \`event_id\`). A \`2xx\` answer \
within 10 seconds is a delivery; anything else is retried after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, \
then every 10 h, for up to 3 days. Verify the signature over the raw bytes received, before parsing, and \
check the timestamp is recent (docs/webhooks.md has a verifier).`;

const SIGNATURE_HEADERS: JsonSchema[] = [
  [
    'fs-webhook-hash',
    "Lowercase hex HMAC-SHA256 of the raw body, keyed with the UTF-8 bytes of the merchant's webhook secret.",
    '^[0-9a-f]{64}$',
  ],
  ['webhook-id', 'The `event_id` (Standard Webhooks).'],
  ['webhook-timestamp', 'Unix seconds of this attempt; refuse old ones to stop replays.', '^[0-9]+$'],
  [
    'webhook-signature',
    '`v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{raw body}`, keyed with the webhook secret.',
    '^v1,',
  ],
].map(([name, description, pattern]) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string', ...(pattern ? { pattern } : {}) },
}));

export const VARIABLE_SERVER = {
  url: '{base_url}',
  description: 'The service (its BASE_URL).',
  variables: { base_url: { default: 'http://127.0.0.1:3000' } },
};

/**
 * @fastify/swagger's `transformObject`: the operations put together by `describeRoute`, with the prose,
 * the shared schemas and the webhook. Without `serverUrl`, the server is a `{base_url}` variable.
 */
export function finishDocument(serverUrl?: string) {
  return (document: Parameters<SwaggerTransformObject>[0]): OpenAPIV3_1.Document => {
    const built = 'openapiObject' in document ? document.openapiObject.paths : undefined;
    return {
      openapi: '3.1.0',
      info: {
        title: 'Payments API',
        version: '1',
        description: DESCRIPTION(),
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: serverUrl ? [{ url: serverUrl }] : [VARIABLE_SERVER],
      security: [{ secretKey: [] }],
      tags: TAGS,
      paths: placeOperations(built ?? {}),
      webhooks: {
        transaction: {
          post: {
            summary: 'A transaction event',
            description: WEBHOOK_DESCRIPTION,
            parameters: SIGNATURE_HEADERS,
            requestBody: {
              required: true,
              content: { 'application/json': { schema: ref('WebhookPayload') } },
            },
            responses: {
              '200': { description: 'Any `2xx` within 10 seconds: delivered.' },
              default: { description: 'Anything else: retried.' },
            },
            security: [],
          },
        },
      },
      components: {
        securitySchemes: {
          secretKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'The secret key: `PA_TEST_…` on test paths, `PA_LIVE_…` on live paths.',
          },
        },
        schemas: {
          ...componentSchemas(),
          EncryptedEnvelope: {
            type: 'object',
            description: 'The encrypted envelope of an endpoint’s fields (see the envelope above).',
            properties: { payload: ENVELOPE_PAYLOAD },
            required: ['payload'],
          },
        },
        examples: errorExamples(),
      },
    } as unknown as OpenAPIV3_1.Document;
  };
}
