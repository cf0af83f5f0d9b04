import { z } from 'zod';
import { BLANK_PATTERN, CLEAN_TEXT_PATTERN, PLAIN_TEXT_PATTERN, SPACE } from '../../schemas/fields';
import { COUNTRY_CODES } from '../../lib/countries';
import { FIAT_CURRENCIES } from '../../lib/currencies';
import { REQUEST_BODIES } from '../../schemas/requests';

/**
 * The routes' zod schemas as the API reference shows them. Requests: each field's JSON Schema with what its
 * `.meta()` says, the limits and the rule its validator applies (read from the validator's own messages),
 * exact amounts in the forms they are read in, and optional fields that may be null or blank. Answers: the
 * schemas of src/schemas/answers.ts under their names.
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

export function toJsonSchema(schema: z.ZodType): JsonSchema {
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
 * (src/schemas/fields.ts `about`), the rule its validator words for merchants, and for exact amounts the
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
  // Plain text (the rule of most text fields) is named once too: its pattern is long.
  const { type: _text, pattern: _plain, ...textRules } = json;
  return {
    ...(kind
      ? AMOUNTS[kind].schema
      : shared
        ? { ...unlisted, $ref: `#/components/schemas/${shared}` }
        : json.pattern === PLAIN_TEXT_PATTERN && json.type === 'string'
          ? { ...textRules, $ref: '#/components/schemas/PlainText' }
          : json),
    ...limits,
    ...(description ? { description } : {}),
    ...(example === undefined ? {} : { examples: [example] }),
  };
}

/** Lists of codes that several fields take, each a schema of its own in the document. */
export const SHARED_ENUMS: Record<string, readonly string[]> = {
  CountryCode: COUNTRY_CODES.alpha2,
  CountryCodeAlpha2Or3: [...COUNTRY_CODES.alpha2, ...COUNTRY_CODES.alpha3],
  CurrencyCode: FIAT_CURRENCIES,
};

export const SHARED_ENUM_DESCRIPTIONS: Record<keyof typeof SHARED_ENUMS, string> = {
  CountryCode: 'An ISO 3166-1 alpha-2 country code (any case is read).',
  CountryCodeAlpha2Or3: 'An ISO 3166-1 alpha-2 or alpha-3 country code (any case is read).',
  CurrencyCode: 'An active ISO 4217 currency code (any case is read).',
};

/** Markdown's code marks taken out, for the fields Swagger UI shows as plain text (example summaries). */
export function plain(text: string): string {
  return text.replaceAll('`', '');
}

/** A request schema as JSON Schema, every field described, with an example of a valid request. */
export function requestSchema(schema: z.ZodType): JsonSchema {
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

/** Whether a field reads null and blank text as "not given" (the `optional` of src/schemas/fields.ts). */
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
export const anyJson = (): JsonSchema => ({
  description: 'Any JSON value with no control characters in its strings or keys.',
  anyOf: [
    { type: ['null', 'boolean', 'number'] },
    { type: 'string', pattern: CLEAN_TEXT_PATTERN },
    { type: 'array', items: ref('AnyJson') },
    { type: 'object', propertyNames: { pattern: CLEAN_TEXT_PATTERN }, additionalProperties: ref('AnyJson') },
  ],
});

/** A list route's query schema as query parameters. */
export function queryParameters(query: z.ZodType): JsonSchema[] {
  const json = requestSchema(query);
  const required = new Set((json.required as string[] | undefined) ?? []);
  return Object.entries(json.properties as Record<string, JsonSchema>).map(([field, schema]) => {
    const { description, ...rest } = schema;
    return { name: field, in: 'query', required: required.has(field), description, schema: rest };
  });
}

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/**
 * The answers' schemas (src/schemas/answers.ts), each under the name it is registered with. Objects are
 * left open: a client must ignore fields it does not know, and the API may add some.
 */
export function answerSchemas(): Record<string, JsonSchema> {
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

/** The shared schemas: the request bodies (src/api/route.ts `named`), the code lists, the answers. */
export function componentSchemas(): Record<string, JsonSchema> {
  return {
    ...Object.fromEntries([...REQUEST_BODIES].map(([name, schema]) => [name, requestSchema(schema)])),
    AnyJson: anyJson(),
    PlainText: {
      type: 'string',
      pattern: PLAIN_TEXT_PATTERN,
      description:
        'Text with something besides spaces and no control characters (C0, DEL, C1); trimmed when read.',
    },
    ...Object.fromEntries(
      Object.entries(SHARED_ENUMS).map(([name, values]) => [
        name,
        { type: 'string', enum: [...values], description: SHARED_ENUM_DESCRIPTIONS[name] },
      ]),
    ),
    ...answerSchemas(),
  };
}
