import { z } from 'zod';
import type { RouteOptions } from 'fastify';
import { REQUEST_BODIES } from '../../schemas/requests';
import { requestBody } from './envelope';
import { errorResponses, errorsOf } from './errors';
import { queryParameters, ref, requestSchema, toJsonSchema, type JsonSchema } from './schemas';

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

/** The name a request body has in the document (src/schemas/requests.ts `named`). */
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
  response?: { 200?: z.ZodType; 503?: z.ZodType };
  [key: string]: unknown;
}

/** Every create's optional header (docs/api.md), checked by src/api/app.ts. */
const IDEMPOTENCY_KEY_HEADER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the create safe to retry: the same key with the same fields answers the transaction the first ' +
    'request made (`Idempotent-Replayed: true`) and starts nothing new; with other fields it is refused with ' +
    '409. Kept per merchant and mode for 24 hours. `order_id` works as before, with or without it.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
};

/**
 * @fastify/swagger's `transform`: a route's operation, from the schemas and `config.reference` it is
 * declared with (src/schemas/endpoints). Routes without a reference (pages, the codec, these docs) are left out.
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
  const creates = input.route.config?.creates !== undefined;
  const answer = schema.response?.[200];
  const answerContent = answer
    ? { 'application/json': { schema: ref(answerName(answer)) } }
    : { 'text/plain': { schema: { type: 'string' } } };
  const replayed = creates
    ? {
        headers: {
          'Idempotent-Replayed': {
            description:
              '`true` when this answers an earlier request with the same `order_id` or `Idempotency-Key` and fields.',
            schema: { type: 'string', enum: ['true'] },
          },
        },
      }
    : {};
  // Only readiness declares a 503 answer.
  const unavailable = schema.response?.[503];
  const readiness = unavailable
    ? {
        '503': {
          description: 'Not ready: what is unavailable, or `draining` while shutting down.',
          content: { 'application/json': { schema: ref(answerName(unavailable)) } },
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
      'x-parameters': [
        ...pathParameters(schema.params),
        ...query,
        ...(creates ? [IDEMPOTENCY_KEY_HEADER] : []),
      ],
      ...(body
        ? {
            'x-requestBody': requestBody(
              reference.body!,
              body,
              (requestSchema(schema.body!).examples as unknown[])[0],
            ),
          }
        : {}),
      'x-responses': {
        '200': { description: reference.answer.description, ...replayed, content: answerContent },
        ...errorResponses(errorsOf(shape), reference.customMessages),
        ...readiness,
      },
    },
  };
}

/** The operations `describeRoute` made, with what travelled under `x-` keys put in place. */
export function placeOperations(built: object): Record<string, Record<string, JsonSchema>> {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const [path, methods] of Object.entries(built)) {
    for (const [method, operation] of Object.entries(methods as Record<string, JsonSchema>)) {
      const {
        'x-parameters': parameters,
        'x-requestBody': body,
        'x-responses': responses,
        ...rest
      } = operation;
      const { responses: _placeholder, parameters: _generated, ...described } = rest;
      const params = parameters as JsonSchema[];
      (paths[path] ??= {})[method] = {
        ...described,
        ...(params.length > 0 ? { parameters: params } : {}),
        ...(body ? { requestBody: body } : {}),
        responses,
      };
    }
  }
  return paths;
}
