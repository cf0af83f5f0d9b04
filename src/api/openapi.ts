import { z } from 'zod';
import { BLANK_PATTERN, CLEAN_TEXT_PATTERN, SPACE } from './fields';
import { COUNTRY_CODES } from '../lib/countries';
import { FIAT_CURRENCIES } from '../lib/currencies';
import { errorCatalogue, type ErrorCode } from '../platform/errors';
import type { RouteOptions } from 'fastify';
import type { SwaggerTransformObject } from '@fastify/swagger';
import type { OpenAPIV3_1 } from 'openapi-types';
import { REQUEST_BODIES, type Reference } from './route';

/**
 * The OpenAPI 3.1 document of the merchant API, served at /docs and written to openapi.json
 * (`npm run openapi`). Request fields come from the zod schemas the routes validate with, and their length
 * limits and rules are read from those validators, so the document cannot list a field the API does not
 * take. The answers have no schemas in the code: they are written here once, after the functions that
 * build them (src/transactions/view.ts, lists.ts, webhook-events.ts), and test/api/openapi.test.ts checks
 * real answers against them.
 */

export type JsonSchema = { [key: string]: unknown };

type AmountKind = 'minor' | 'decimal';

/**
 * A positive decimal as text: up to 20 whole digits and 18 decimals (leading zeros aside), not zero. Without
 * lookahead, which not every regex engine that reads the document has: a fraction of a zero whole part
 * spells out where its first non-zero digit is.
 */
const DECIMAL_PATTERN = (() => {
  const fractions = Array.from(
    { length: 18 },
    (_, zeros) => `${'0'.repeat(zeros)}[1-9][0-9]{0,${17 - zeros}}`,
  );
  return `^${SPACE}*0*([1-9][0-9]{0,19}(\\.[0-9]{1,18})?|0\\.(${fractions.join('|')}))${SPACE}*$`;
})();

const AMOUNTS: Record<AmountKind, { schema: JsonSchema; description: string; example: unknown }> = {
  minor: {
    // A string of at most 18 digits (leading zeros aside), not zero; an integer in range.
    schema: {
      type: ['integer', 'string'],
      minimum: 1,
      // 10^18 exactly (a JSON number is a double): the largest 18-digit integer is below it.
      exclusiveMaximum: 1_000_000_000_000_000_000,
      pattern: `^${SPACE}*0*[1-9][0-9]{0,17}${SPACE}*$`,
    },
    description:
      "A positive integer in the currency's minor units (ISO 4217 exponent: 1050 USD is 10.50 USD), at most " +
      '18 digits, as a JSON integer or a string of digits; read exactly, never through a float.',
    example: 1050,
  },
  decimal: {
    // A string: up to 20 whole and 18 decimal digits, not zero. A number: in the same range; the digits a
    // currency or asset takes are checked against the one chosen.
    schema: {
      type: ['number', 'string'],
      minimum: 0.000_000_000_000_000_001,
      exclusiveMaximum: 100_000_000_000_000_000_000,
      pattern: DECIMAL_PATTERN,
    },
    description:
      "A positive decimal in major units, at most the currency's or asset's decimals, as a JSON number or a " +
      'numeric string; read exactly, never through a float.',
    example: 25.5,
  },
};

const ENVELOPE_EXAMPLE =
  '9f1c2b7e4d3a6f5e8c0b1a2d3e4f5a6b:6b1f0c8e2d4a7b9c1e3f5a7b9d0c2e4f8a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d';

const ENVELOPE_PAYLOAD: JsonSchema = {
  type: 'string',
  description: '`<IV as hex>:<ciphertext as hex>`: the fields, encrypted.',
  pattern: '^[0-9a-fA-F]{32}:([0-9a-fA-F]{32})+$',
  examples: [ENVELOPE_EXAMPLE],
};

/** The fields of an object schema, also when a transform follows it (the ramp's). */
function fieldsOf(schema: z.ZodType): Record<string, z.ZodType> {
  const object = schema instanceof z.ZodPipe ? schema.in : schema;
  if (!(object instanceof z.ZodObject)) throw new Error('request schemas are objects');
  return object.shape as Record<string, z.ZodType>;
}

function messagesFor(schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value);
  return result.success ? [] : result.error.issues.map((issue) => issue.message);
}

/** A field's length limits, read from the message its validator gives an over-long value. */
function lengthsOf(schema: z.ZodType): { minLength?: number; maxLength?: number } {
  for (const message of messagesFor(schema, 'x'.repeat(10_000))) {
    const match = / between (\d+) and (\d+) characters\.$/.exec(message);
    if (match) return { minLength: Number(match[1]), maxLength: Number(match[2]) };
  }
  return {};
}

/** A field's format rule, as its validator states it to a merchant ("must be a valid email address"). */
function ruleOf(schema: z.ZodType, minLength = 1): string | undefined {
  for (const value of ['!', 'é', '!'.repeat(minLength), 'é'.repeat(minLength)]) {
    for (const message of messagesFor(schema, value)) {
      const match = / field must be (.+)\.$/.exec(message);
      if (match && !match[1]!.startsWith('between ')) return `Must be ${match[1]}.`;
    }
  }
  return undefined;
}

/** Whether an exact-number field takes minor units or a decimal, by what its validator accepts. */
function amountKindOf(schema: z.ZodType): AmountKind | undefined {
  const accepts = (value: unknown) => schema.safeParse(value).success;
  if (accepts('not a number')) return undefined;
  if (accepts('1.5')) return 'decimal';
  return accepts('15') ? 'minor' : undefined;
}

function toJsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    io: 'input',
    target: 'draft-2020-12',
    // Exact-number fields take any JSON value and parse it themselves: described below.
    unrepresentable: 'any',
    // zod leaves the examples of a field that transforms out of its input schema; ours are inputs.
    override: (ctx) => {
      const examples = z.globalRegistry.get(ctx.zodSchema)?.examples;
      if (examples !== undefined) ctx.jsonSchema.examples = examples as unknown[];
    },
  }) as JsonSchema;
  return json;
}

/**
 * A field as the reference shows it: its validator's JSON Schema with what `.meta()` says of it
 * (src/api/fields.ts `about`), the rule its validator words for merchants, and for exact amounts the
 * forms they are read in. An `x-amount` marks a field the route reads as an amount later (the ramp's).
 */
function describeField(field: z.ZodType, generated: JsonSchema): JsonSchema {
  const { description: meaning, examples, 'x-amount': later, ...json } = generated;
  const untyped = Object.keys(json).length === 0;
  const kind = untyped ? (amountKindOf(field) ?? (later as AmountKind | undefined)) : undefined;
  const limits = kind ? {} : lengthsOf(field);
  const rule = kind || json.enum || json.not ? undefined : ruleOf(field, limits.minLength);
  const description = [meaning, kind ? AMOUNTS[kind].description : rule].filter(Boolean).join(' ');
  const example = examples ? (examples as unknown[])[0] : kind ? AMOUNTS[kind].example : undefined;
  // A long list the reference holds once (countries, currencies): named, not repeated per field.
  const shared = Object.entries(SHARED_ENUMS).find(
    ([, values]) => JSON.stringify(json.enum) === JSON.stringify(values),
  )?.[0];
  const { enum: _listed, ...unlisted } = json;
  return {
    ...(kind
      ? AMOUNTS[kind].schema
      : shared
        ? { ...unlisted, $ref: `#/components/schemas/${shared}` }
        : json),
    ...limits,
    ...(description ? { description } : {}),
    ...(example === undefined ? {} : { examples: [example] }),
  };
}

/** Lists of codes that several fields take, each a schema of its own in the document. */
const SHARED_ENUMS: Record<string, readonly string[]> = {
  CountryCode: COUNTRY_CODES.alpha2,
  CountryCodeAlpha2Or3: [...COUNTRY_CODES.alpha2, ...COUNTRY_CODES.alpha3],
  CurrencyCode: FIAT_CURRENCIES,
};

const SHARED_ENUM_DESCRIPTIONS: Record<keyof typeof SHARED_ENUMS, string> = {
  CountryCode: 'An ISO 3166-1 alpha-2 country code (any case is read).',
  CountryCodeAlpha2Or3: 'An ISO 3166-1 alpha-2 or alpha-3 country code (any case is read).',
  CurrencyCode: 'An active ISO 4217 currency code (any case is read).',
};

/** Markdown's code marks taken out, for the fields Swagger UI shows as plain text (example summaries). */
function plain(text: string): string {
  return text.replaceAll('`', '');
}

/** A request schema as JSON Schema, every field described, with an example of a valid request. */
function requestSchema(schema: z.ZodType): JsonSchema {
  const json = toJsonSchema(schema);
  const fields = fieldsOf(schema);
  const properties: Record<string, JsonSchema> = {};
  const example: Record<string, unknown> = {};
  for (const [field, property] of Object.entries(json.properties as Record<string, JsonSchema>)) {
    const described = describeField(fields[field]!, property);
    properties[field] = takesBlank(fields[field]!) ? orBlank(described) : described;
    const examples = described.examples as unknown[] | undefined;
    if (examples) example[field] = examples[0];
  }
  // Fields the API does not know are ignored, as long as their text is clean (see `AnyJson`).
  return { ...json, properties, additionalProperties: ref('AnyJson'), examples: [example] };
}

/** Whether a field reads null and blank text as "not given" (the `optional` of src/api/fields). */
function takesBlank(field: z.ZodType): boolean {
  return [null, '', ' '].every((value) => field.safeParse(value).success);
}

/** A field that may also be null or blank, which is the same as leaving it out. */
function orBlank(schema: JsonSchema): JsonSchema {
  const { description, examples, ...rule } = schema;
  return {
    anyOf: [rule, { type: 'string', pattern: BLANK_PATTERN }, { type: 'null' }],
    description: [description, 'Null or blank is the same as leaving it out.'].filter(Boolean).join(' '),
    ...(examples ? { examples } : {}),
  };
}

/**
 * Any JSON value whose strings and keys hold no control character: what an unknown field may carry (the
 * API refuses such text wherever it appears, and ignores the field otherwise).
 */
const anyJson = (): JsonSchema => ({
  description: 'Any JSON value with no control characters in its strings or keys.',
  anyOf: [
    { type: ['null', 'boolean', 'number'] },
    { type: 'string', pattern: CLEAN_TEXT_PATTERN },
    { type: 'array', items: ref('AnyJson') },
    { type: 'object', propertyNames: { pattern: CLEAN_TEXT_PATTERN }, additionalProperties: ref('AnyJson') },
  ],
});

/** A list route's query schema as query parameters. */
function queryParameters(query: z.ZodType): JsonSchema[] {
  const json = requestSchema(query);
  const required = new Set((json.required as string[] | undefined) ?? []);
  return Object.entries(json.properties as Record<string, JsonSchema>).map(([field, schema]) => {
    const { description, ...rest } = schema;
    return { name: field, in: 'query', required: required.has(field), description, schema: rest };
  });
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/**
 * The answers' schemas (src/schemas/answers.ts), each under the name it is registered with. Objects are
 * left open: a client must ignore fields it does not know, and the API may add some.
 */
function answerSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(z.globalRegistry, {
    io: 'output',
    target: 'draft-2020-12',
    // Exact numbers are written by the serializer: their schemas are in their metadata.
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
    override: (ctx) => {
      if (ctx.jsonSchema.additionalProperties === false) delete ctx.jsonSchema.additionalProperties;
    },
  });
  return Object.fromEntries(
    Object.entries(schemas).map(([name, { $id: _id, $schema: _dialect, id: _name, ...json }]) => [
      name,
      nullableAsType(json as JsonSchema),
    ]),
  );
}

const isSchema = (value: unknown): value is JsonSchema =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** `anyOf: [{type: 'string', …}, {type: 'null'}]` as `type: ['string', 'null']`, as people read it. */
function nullableAsType(schema: JsonSchema): JsonSchema {
  const walked = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      Array.isArray(value)
        ? value.map((item) => (isSchema(item) ? nullableAsType(item) : item))
        : isSchema(value)
          ? nullableAsType(value)
          : value,
    ]),
  );
  const branches = walked.anyOf as JsonSchema[] | undefined;
  const [value, empty] = branches ?? [];
  if (branches?.length !== 2 || empty?.type !== 'null' || typeof value?.type !== 'string') return walked;
  const { anyOf: _branches, ...rest } = walked;
  return {
    ...value,
    ...rest,
    type: [value.type, 'null'],
    ...(value.enum ? { enum: [...(value.enum as unknown[]), null] } : {}),
  };
}

/** When each error happens: shown in the error table and on each response. */
const ERROR_WHEN: Record<ErrorCode, string> = {
  AUTH_MISSING: 'No bearer token.',
  AUTH_INVALID: 'The bearer token is not a valid key, or is the other mode’s.',
  ENVELOPE_INVALID: 'The envelope does not decrypt to a JSON object with the merchant’s key.',
  MALFORMED_JSON: 'The body is not JSON.',
  UNSUPPORTED_MEDIA_TYPE: 'The body is not `application/json`.',
  PAYLOAD_TOO_LARGE: 'The body is over 64 KiB.',
  VALIDATION: 'A field fails its rule; `errors` has every failing field.',
  ORDER_CONFLICT: '`order_id` reused with other fields.',
  TRANSACTION_NOT_FOUND: 'No such transaction of this merchant and mode.',
  ROUTE_NOT_FOUND: 'Unknown route or mode, or a test-mode endpoint called in live mode.',
  METHOD_NOT_ALLOWED: 'A known URL asked with a method it does not take; `Allow` lists those it takes.',
  BAD_URL: 'Malformed percent-encoding in the URL.',
  URL_TOO_LONG: 'A path segment over 191 characters.',
  BAD_REQUEST: 'Another malformed request.',
  RATE_LIMITED: 'Over the rate limit; retry after `Retry-After` seconds.',
  UNAVAILABLE: 'The database or workflow engine cannot be reached; send the same request again.',
  INTERNAL: 'Anything unexpected; the `x-request-id` header identifies the request.',
};

const ERROR_EXAMPLES: Partial<Record<ErrorCode, JsonSchema>> = {
  VALIDATION: {
    message: 'The email field must be a valid email address.',
    errors: {
      email: ['The email field must be a valid email address.'],
      amount: ["The amount field must be a positive integer in the currency's minor units."],
    },
  },
};

const errorCodes = Object.keys(errorCatalogue) as ErrorCode[];

function errorExamples(): Record<string, JsonSchema> {
  return Object.fromEntries(
    errorCodes.map((code) => [
      code,
      {
        summary: plain(ERROR_WHEN[code]),
        value: ERROR_EXAMPLES[code] ?? { message: errorCatalogue[code].message },
      },
    ]),
  );
}

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
};

/** The error answers an operation can give, one response per HTTP status, each code an example. */
function errorResponses(codes: ErrorCode[], custom: Partial<Record<ErrorCode, string>> = {}): JsonSchema {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodes)
    if (codes.includes(code))
      byStatus.set(errorCatalogue[code].status, [...(byStatus.get(errorCatalogue[code].status) ?? []), code]);
  const responses: JsonSchema = {};
  for (const [status, group] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
    const messages = group.map((code) =>
      code === 'VALIDATION'
        ? "the first failing field's message"
        : `\`${custom[code] ?? errorCatalogue[code].message}\``,
    );
    responses[String(status)] = {
      description: messages.join(' or '),
      ...(status === 429 || status === 503 ? { headers: RETRY_AFTER } : {}),
      content: {
        'application/json': {
          schema: ref('Error'),
          examples: Object.fromEntries(
            group.map((code) => [
              code,
              custom[code]
                ? { summary: plain(ERROR_WHEN[code]), value: { message: custom[code] } }
                : { $ref: `#/components/examples/${code}` },
            ]),
          ),
        },
      },
    };
  }
  return responses;
}

type Tag =
  | 'Card payments'
  | 'Payouts and wallets'
  | 'Crypto'
  | 'Transactions'
  | 'Payment links'
  | 'Webhook events'
  | 'Operations';

const TAGS: { name: Tag; description: string }[] = [
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
];

/** What a route's reference says about its shape, for the errors it can answer. */
interface Shape {
  path: string;
  reference: Reference;
  query: boolean;
  creates: boolean;
}

/** The error codes an operation can answer, from its shape. */
function errorsOf({ path, reference, query, creates }: Shape): ErrorCode[] {
  if (reference.open) return ['INTERNAL'];
  const codes: ErrorCode[] = ['BAD_URL', 'ROUTE_NOT_FOUND', 'INTERNAL', 'UNAVAILABLE'];
  codes.push('AUTH_MISSING', 'AUTH_INVALID', 'RATE_LIMITED');
  if (path.includes('{')) codes.push('URL_TOO_LONG');
  if (reference.body)
    codes.push('MALFORMED_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'BAD_REQUEST', 'VALIDATION');
  if (reference.body && reference.body !== 'plain') codes.push('ENVELOPE_INVALID');
  if (query) codes.push('VALIDATION');
  if (creates) codes.push('ORDER_CONFLICT');
  return [...codes, ...(reference.refusals ?? [])];
}
const errorTable = () =>
  [
    '| HTTP | `message` | When |',
    '| --- | --- | --- |',
    ...errorCodes
      .map((code) => ({ code, ...errorCatalogue[code] }))
      .sort((a, b) => a.status - b.status)
      .map(
        ({ code, status, message }) =>
          `| ${status} | ${code === 'VALIDATION' ? "the first failing field's message" : `\`${message}\``} | ${ERROR_WHEN[code]} |`,
      ),
  ].join('\n');

const DESCRIPTION =
  () => `Card payments (raw card data, or typed by the customer on our hosted page), alternative payment \
methods, card payouts from merchant wallets, crypto ramps and payins, refunds, chargebacks, transaction lists \
and signed webhooks. Generated from the validators the service runs; docs/api.md has the full reference.

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
\`Idempotent-Replayed: true\`; with other fields it is \`409\`.

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
  {
    name: 'fs-webhook-hash',
    description:
      "Lowercase hex HMAC-SHA256 of the raw body, keyed with the UTF-8 bytes of the merchant's webhook secret.",
    schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  },
  {
    name: 'webhook-id',
    description: 'The `event_id` (Standard Webhooks).',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-timestamp',
    description: 'Unix seconds of this attempt; refuse old ones to stop replays.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    description:
      '`v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{raw body}`, keyed with the webhook secret.',
    schema: { type: 'string', pattern: '^v1,' },
  },
].map((header) => ({ ...header, in: 'header', required: true }));

/** The envelope whose payload decrypts to `plaintext`'s fields. */
function envelopeOf(plaintext: string): JsonSchema {
  return {
    type: 'object',
    title: 'Encrypted envelope',
    properties: {
      payload: {
        ...ENVELOPE_PAYLOAD,
        description: `The \`${plaintext}\` fields as JSON text, encrypted: \`<IV as hex>:<ciphertext as hex>\`.`,
        contentMediaType: 'application/json',
        contentSchema: ref(plaintext),
      },
    },
    required: ['payload'],
  };
}

function requestBody(form: NonNullable<Reference['body']>, name: string, example: unknown): JsonSchema {
  const plain = { ...ref(name), title: `${name} (plain JSON)` };
  const schema =
    form === 'plain'
      ? ref(name)
      : form === 'encrypted'
        ? envelopeOf(name)
        : { anyOf: [plain, envelopeOf(name)] };
  const how = {
    plain: `Plain JSON: the \`${name}\` fields.`,
    encrypted:
      `The encrypted envelope of the \`${name}\` fields: see them under Schema, \`payload\`, ` +
      'Content schema. Plain bodies are refused.',
    either: `The \`${name}\` fields as plain JSON, or their encrypted envelope.`,
  }[form];
  return {
    required: true,
    description: how,
    // For tools that read the fields of an encrypted body without following `contentSchema`.
    ...(form === 'plain' ? {} : { 'x-plaintext': ref(name) }),
    content: {
      'application/json': {
        schema,
        example: form === 'encrypted' ? { payload: ENVELOPE_EXAMPLE } : example,
      },
    },
  };
}

/** A route's path parameters, from its params schema. */
function pathParameters(params: z.ZodType | undefined): JsonSchema[] {
  if (!params) return [];
  const json = toJsonSchema(params);
  return Object.entries(json.properties as Record<string, JsonSchema>).map(([name, schema]) => {
    const { description, ...rest } = schema;
    return { name, in: 'path', required: true, description, schema: rest };
  });
}

/** The name an answer has in the document (its `id`, src/schemas/answers.ts). */
function answerName(schema: z.ZodType): string {
  const id = z.globalRegistry.get(schema)?.id;
  if (!id) throw new Error('a documented route answers with a schema that has no name');
  return id;
}

/** The name a request body has in the document (src/api/route.ts `named`). */
function nameOf(schema: z.ZodType): string {
  const found = [...REQUEST_BODIES].find(([, known]) => known === schema);
  if (!found) throw new Error('a documented route takes a body whose schema is not named');
  return found[0];
}

interface RouteSchema {
  operationId?: string;
  params?: z.ZodType;
  querystring?: z.ZodType;
  body?: z.ZodType;
  [key: string]: unknown;
}

/**
 * @fastify/swagger's `transform`: a route's operation, from the schemas and `config.reference` it is
 * declared with (src/api/route.ts). Routes without a reference (pages, the codec, these docs) are left out.
 * What the plugin would rewrite (parameters, body, answers) travels under `x-` keys, which it copies as
 * they are, and `finishDocument` puts them in place.
 */
export function describeRoute(input: { schema?: unknown; url: string; route: RouteOptions }): {
  schema: JsonSchema;
  url: string;
} {
  const reference = input.route.config?.reference;
  const schema = (input.schema ?? {}) as RouteSchema;
  if (!reference || !schema.operationId) return { schema: { hide: true }, url: input.url };
  const url = reference.testOnly ? input.url.replace(':mode', 'test') : input.url;
  const path = url.replace(/:(\w+)/g, '{$1}');
  const query = schema.querystring ? queryParameters(schema.querystring) : [];
  const body = schema.body && reference.body ? nameOf(schema.body) : undefined;
  const requests = body ? requestSchema(REQUEST_BODIES.get(body)!) : undefined;
  const creates = input.route.config?.creates !== undefined;
  const answerContent = reference.answer.schema
    ? { 'application/json': { schema: ref(answerName(reference.answer.schema)) } }
    : { 'text/plain': { schema: { type: 'string' } } };
  const replayed = creates
    ? {
        headers: {
          'Idempotent-Replayed': {
            description: '`true` when this answers an earlier request with the same `order_id` and fields.',
            schema: { type: 'string', enum: ['true'] },
          },
        },
      }
    : {};
  const readiness =
    schema.operationId === 'readiness'
      ? {
          '503': {
            description: 'Not ready: what is unavailable, or `draining` while shutting down.',
            content: { 'application/json': { schema: ref('Readiness') } },
          },
        }
      : {};
  const shape = { path, reference, query: query.length > 0, creates };
  return {
    url,
    schema: {
      operationId: schema.operationId,
      tags: schema.tags,
      summary: schema.summary,
      description: schema.description,
      ...(reference.open ? { security: [] } : {}),
      'x-parameters': [...pathParameters(schema.params), ...query],
      ...(body
        ? { 'x-requestBody': requestBody(reference.body!, body, (requests!.examples as unknown[])[0]) }
        : {}),
      'x-responses': {
        '200': { description: reference.answer.description, ...replayed, content: answerContent },
        ...errorResponses(errorsOf(shape), reference.customMessages),
        ...readiness,
      },
    },
  };
}

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
    const paths: Record<string, Record<string, JsonSchema>> = {};
    for (const [path, methods] of Object.entries(built ?? {})) {
      for (const [method, operation] of Object.entries(methods as Record<string, JsonSchema>)) {
        const {
          'x-parameters': parameters,
          'x-requestBody': body,
          'x-responses': responses,
          ...rest
        } = operation;
        delete rest.responses;
        delete rest.parameters;
        const params = parameters as JsonSchema[];
        (paths[path] ??= {})[method] = {
          ...rest,
          ...(params.length > 0 ? { parameters: params } : {}),
          ...(body ? { requestBody: body } : {}),
          responses,
        };
      }
    }
    const requests = Object.fromEntries(
      [...REQUEST_BODIES].map(([name, schema]) => [name, requestSchema(schema)]),
    );
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
      paths,
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
          ...requests,
          AnyJson: anyJson(),
          ...Object.fromEntries(
            Object.entries(SHARED_ENUMS).map(([name, values]) => [
              name,
              { type: 'string', enum: [...values], description: SHARED_ENUM_DESCRIPTIONS[name] },
            ]),
          ),
          ...answerSchemas(),
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
