import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { ApiError, errorCatalogue, type ErrorCode } from '../../platform/errors';

const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'MALFORMED_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_BAD_URL: 'BAD_URL',
  FST_ERR_MAX_PARAM_LENGTH: 'URL_TOO_LONG',
};

/** Postgres error classes and codes that mean "not reachable now", not "this request is wrong". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

/**
 * True when an error, or one it was caused by, says Postgres or Temporal cannot be reached right now: the
 * merchant should try again, and gets 503 with Retry-After instead of a 500.
 */
export function isUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 8; depth += 1) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
    if (code === 14) return true; // gRPC UNAVAILABLE (the Temporal server)
    if (
      typeof message === 'string' &&
      /Connection terminated|connect ECONNREFUSED|Client has encountered a connection error/.test(message)
    )
      return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Errors the router raises before any route or hook runs (a malformed or over-long URL): the contract's
 * shape, never the framework's body, which echoes the URL.
 */
export function answerFrameworkError(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  const apiError = new ApiError(fastifyCodes[error.code] ?? 'BAD_REQUEST');
  void reply.status(apiError.status).send({ message: apiError.message });
}

/** A route the app serves, as it was registered: its method, its path pattern and its options. */
export interface ServedRoute {
  method: string;
  url: string;
  pattern: RegExp;
  /** The route's options as Fastify keeps them: hooks registered later may still add to its config. */
  route: RouteOptions;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered after the error handling, in order (Fastify keeps no list to ask). */
    servedRoutes: readonly ServedRoute[];
  }
}

/** The one place errors become HTTP answers (docs/api.md, errors). Nothing internal leaks in a 5xx. */
export function registerErrorHandling(app: FastifyInstance): void {
  // Every route registered from here on, as a path pattern and its method: a URL the service serves, asked
  // with a method it does not take, is 405 with the methods it does take in `Allow` (RFC 9110), not 404.
  const served: ServedRoute[] = [];
  app.decorate('servedRoutes', served);
  app.addHook('onRoute', (route) => {
    const literal = route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const pattern = new RegExp(`^${literal.replace(/:\w+/g, '[^/]+?').replace(/\\\*/g, '.*')}$`);
    for (const method of [route.method].flat()) served.push({ method, url: route.url, pattern, route });
  });
  /** A request no route took: 405 for a URL the service serves under other methods, else 404. */
  const unmatched = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]!;
    const allowed = [...new Set(served.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    if (allowed.length > 0) {
      void reply
        .status(405)
        .header('allow', allowed.join(', '))
        .send({ message: errorCatalogue.METHOD_NOT_ALLOWED.message });
      return;
    }
    void reply.status(404).send({ message: errorCatalogue.ROUTE_NOT_FOUND.message });
  };
  app.setNotFoundHandler(unmatched);

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    let apiError: ApiError;
    if (error instanceof ApiError) {
      apiError = error;
    } else if (error.code && fastifyCodes[error.code]) {
      apiError = new ApiError(fastifyCodes[error.code]!);
    } else if (error.code === 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE' && !request.routeOptions.url) {
      // A method that takes a body (QUERY), sent without one to a URL no route takes with it: the router
      // refuses it before the not-found handler would.
      unmatched(request, reply);
      return;
    } else if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      // Another client error from the framework: its status, never its message (it can echo input).
      request.log.info(
        { code: error.code, statusCode: error.statusCode },
        'request refused by the framework',
      );
      apiError = new ApiError('BAD_REQUEST');
      void reply.status(error.statusCode).send({ message: apiError.message });
      return;
    } else if (isUnavailable(error)) {
      request.log.warn({ err: error }, 'a dependency is unavailable');
      apiError = new ApiError('UNAVAILABLE', undefined, { retryAfterSeconds: 5 });
    } else {
      request.log.error({ err: error }, 'unhandled error');
      apiError = new ApiError('INTERNAL');
    }
    if (apiError.extra.retryAfterSeconds !== undefined) {
      void reply.header('retry-after', String(apiError.extra.retryAfterSeconds));
    }
    const body: Record<string, unknown> = { message: apiError.message };
    if (apiError.extra.errors) body.errors = apiError.extra.errors;
    void reply.status(apiError.status).send(body);
  });
}
