import { errorCatalogue, type ErrorCode } from '../../platform/errors';
import type { Reference } from '../../schemas/endpoints';
import { plain, ref, type JsonSchema } from './schemas';

/** The errors in the API reference: the table, each operation's error answers and their examples. */

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

export function errorExamples(): Record<string, JsonSchema> {
  return Object.fromEntries(
    errorCodes.map((code) => [
      code,
      {
        summary: plain(errorCatalogue[code].when),
        value: ERROR_EXAMPLES[code] ?? { message: errorCatalogue[code].message },
      },
    ]),
  );
}

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
};

/** The error answers an operation can give, one response per HTTP status, each code an example. */
export function errorResponses(
  codes: ErrorCode[],
  custom: Partial<Record<ErrorCode, string>> = {},
): JsonSchema {
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
                ? { summary: plain(errorCatalogue[code].when), value: { message: custom[code] } }
                : { $ref: `#/components/examples/${code}` },
            ]),
          ),
        },
      },
    };
  }
  return responses;
}

/** What a route's reference says about its shape, for the errors it can answer. */
interface Shape {
  path: string;
  reference: Reference;
  query: boolean;
  creates: boolean;
}

/** The error codes an operation can answer, from its shape. */
export function errorsOf({ path, reference, query, creates }: Shape): ErrorCode[] {
  if (reference.open) return ['INTERNAL'];
  const codes: ErrorCode[] = ['BAD_URL', 'ROUTE_NOT_FOUND', 'INTERNAL', 'UNAVAILABLE'];
  codes.push('AUTH_MISSING', 'AUTH_INVALID', 'RATE_LIMITED');
  if (path.includes('{')) codes.push('URL_TOO_LONG');
  if (reference.body)
    codes.push('MALFORMED_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'BAD_REQUEST', 'VALIDATION');
  if (reference.body && reference.body !== 'plain') codes.push('ENVELOPE_INVALID');
  if (query) codes.push('VALIDATION');
  if (creates) codes.push('ORDER_CONFLICT', 'IDEMPOTENCY_CONFLICT');
  return [...codes, ...(reference.refusals ?? [])];
}
export const errorTable = () =>
  [
    '| HTTP | `message` | When |',
    '| --- | --- | --- |',
    ...errorCodes
      .map((code) => ({ code, ...errorCatalogue[code] }))
      .sort((a, b) => a.status - b.status)
      .map(
        ({ code, status, message }) =>
          `| ${status} | ${code === 'VALIDATION' ? "the first failing field's message" : `\`${message}\``} | ${errorCatalogue[code].when} |`,
      ),
  ].join('\n');
