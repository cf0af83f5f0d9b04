import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyTypeProvider,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { z } from 'zod';
import type { TransactionKind } from '../lib/vocabulary';
import type { Reference } from '../schemas/endpoints';

/** A route's `config`: the plugins, the metrics and the reference read it (src/schemas/endpoints). */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** How the API reference documents the route; pages, the codec and the docs have none. */
    reference?: Reference;
    /** A create route, and the kind the transactions counter counts it under. */
    creates?: TransactionKind;
    /** A hosted page for the customer: its own rate limit, and its own scope in the metrics. */
    page?: boolean;
    /** Why a route that is neither an endpoint nor a page stays out of the reference. */
    unlisted?: string;
  }
}

/**
 * Types each handler's request (params, body, querystring) as the validated output of its zod schema.
 * Answers are not typed from `schema.response`: the domain's body builders (src/transactions/view.ts,
 * lists.ts) build them field by field, and real answers are checked against those schemas by the tests
 * (test/api/openapi.test.ts, test/edge).
 */
export interface ApiTypeProvider extends FastifyTypeProvider {
  validator: this['schema'] extends z.ZodType ? z.output<this['schema']> : unknown;
  serializer: unknown;
}

/** The Fastify instance routes are declared on. */
export type Api = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ApiTypeProvider
>;
