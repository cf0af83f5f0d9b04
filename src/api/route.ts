import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { TransactionKind } from '../lib/vocabulary';
import type { Reference } from '../schemas/endpoints';

/** A route's `config`: the plugins, the metrics and the reference read it (src/schemas/endpoints.ts). */
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

/** The Fastify instance routes are declared on: its zod schemas type each handler's request. */
export type Api = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;
