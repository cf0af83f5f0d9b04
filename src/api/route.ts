import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ErrorCode } from '../platform/errors';
import { MODES, type TransactionKind } from '../lib/vocabulary';

/**
 * What a route declares besides its path and schemas, in its `config`: the plugins, the metrics and the
 * API reference (src/api/openapi.ts) read it from there, so an endpoint is named in one place only.
 */
export interface Reference {
  /** How the body comes: the encrypted envelope only, plain JSON only, or either. */
  body?: 'encrypted' | 'plain' | 'either';
  /** The success answer (src/schemas/answers.ts); Prometheus text without a schema. */
  answer: { schema?: z.ZodType; description: string };
  /** Errors beyond those every operation of its shape can give. */
  refusals?: ErrorCode[];
  /** Messages other than the catalogue's, where the route words one its own way. */
  customMessages?: Partial<Record<ErrorCode, string>>;
  /** Taken without a key. */
  open?: boolean;
  /** Served in test mode only: documented under `test` instead of `{mode}`. */
  testOnly?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** How the API reference documents the route; pages, the codec and the docs have none. */
    reference?: Reference;
    /** A create route, and the kind the transactions counter counts it under. */
    creates?: TransactionKind;
    /** A hosted page for the customer: its own rate limit, and its own scope in the metrics. */
    page?: boolean;
  }
}

/** The Fastify instance routes are declared on: its zod schemas type each handler's request. */
export type Api = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

/** The path's mode. Any other text is answered 404 by the authentication, before validation. */
const mode = z.string().meta({ description: "`test` or `live`: must be the key's mode.", enum: [...MODES] });

/** A transaction named by its id or its order id. */
const id = z
  .string()
  .meta({ description: 'A `transaction_id`, or the merchant’s `order_id`.', maxLength: 191 });

export const ModeParams = z.object({ mode });
export const TransactionParams = z.object({ mode, id });
export const EventParams = z.object({
  mode,
  event_id: z
    .string()
    .meta({ description: 'The event (`event_id` in the event log and the webhook).', maxLength: 191 }),
});

/** A sandbox table as Markdown, for an operation's description. */
export const markdownTable = (rows: [string, string][]) =>
  [
    '| Card | Outcome |',
    '| --- | --- |',
    ...rows.map(([cards, outcome]) => `| ${cards} | ${outcome} |`),
  ].join('\n');

/** Request bodies by their name in the reference, as their schemas are declared (`named`). */
export const REQUEST_BODIES = new Map<string, z.ZodType>();

/** A request body's schema, under the name the reference gives it. */
export function named<T extends z.ZodType>(name: string, schema: T): T {
  if (REQUEST_BODIES.has(name)) throw new Error(`two request bodies are named ${name}`);
  REQUEST_BODIES.set(name, schema);
  return schema;
}
