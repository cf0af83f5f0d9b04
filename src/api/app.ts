import Fastify, {
  type FastifySchemaCompiler,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type RouteOptions,
  type FastifyRequest,
} from 'fastify';
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import type { z } from 'zod';
import { parseInput } from '../platform/validation';
import { finishDocument } from './openapi';
import { describeRoute } from './reference/operations';
import { createLogger, type Logger } from '../platform/log';
import { ApiError, validationError } from '../platform/errors';
import { createApiMetrics } from '../platform/metrics';
import { traceRequests } from './tracing';
import { parseJsonExact, stringifyExact } from '../lib/json';
import { sandboxRates } from '../coins/rates';
import { answerFrameworkError, registerErrorHandling } from './plugins/errors';
import { authenticate } from './plugins/auth';
import { decryptBody, decryptBodyIfEnveloped } from './plugins/envelope';
import { notFoundPage, parseForm } from './pages/hosted';
import { codecRoutes } from './routes/codec';
import { docsRoutes } from './routes/docs';
import { merchantRoutes } from './routes/index';
import { pages } from './pages/index';
import type { AppDeps, PageDeps, RouteDeps } from './deps';
import type { ApiTypeProvider } from './route';
import { domainServices } from './services';
import * as endpoints from '../schemas/endpoints';

export type { AppDeps };

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

declare module 'fastify' {
  interface FastifyInstance {
    authenticate: Hook;
    decryptBody: Hook;
    decryptBodyIfEnveloped: Hook;
  }
  interface FastifyRequest {
    /** A create's `Idempotency-Key` header, checked (docs/api.md). */
    idempotencyKey?: string;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._-]{8,64}$/;

/**
 * Longest path parameter the router accepts: an order id (191 characters) looked up by path fits.
 * Longer answers 414 through the error handler.
 */
const MAX_PARAM_LENGTH = 191;

/** Ids, order ids and modes are printable ASCII; anything else in a path cannot name a transaction. */
const PARAM = /^[\x21-\x7e]+$/;

function badParam(request: FastifyRequest): string | undefined {
  const params = (request.params ?? {}) as Record<string, unknown>;
  return Object.keys(params).find((name) => typeof params[name] !== 'string' || !PARAM.test(params[name]));
}

/** Merchant routes: a path parameter that cannot be an id is a 404 in the contract's shape. */
const refuseBadParams: Hook = async (request) => {
  const name = badParam(request);
  if (name !== undefined) throw new ApiError(name === 'id' ? 'TRANSACTION_NOT_FOUND' : 'ROUTE_NOT_FOUND');
};

/** Hosted pages: the same, answered with the not-found page a customer can read. */
const refuseBadPageParams = async (request: FastifyRequest, reply: FastifyReply) => {
  if (badParam(request) !== undefined) return notFoundPage(reply);
};

/**
 * Validation by each route's zod schemas, answered in the contract's 422 (every failing field). A body or
 * query left out is read as an empty object: its required fields are named, not "body must be an object".
 */
const validatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    try {
      const given = httpPart === 'body' || httpPart === 'querystring' ? (data ?? {}) : data;
      return { value: parseInput(schema, given) };
    } catch (error) {
      return { error: error as Error };
    }
  };

/** What an `Idempotency-Key` may be: 1 to 255 visible ASCII characters (a UUID, a hash, an order's key). */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * A create's `Idempotency-Key` header (docs/api.md), checked and kept on the request for its handler: the
 * same key with the same fields answers the transaction the first made.
 */
const readIdempotencyKey: Hook = async (request) => {
  const given = request.headers['idempotency-key'];
  if (given === undefined) return;
  if (typeof given !== 'string' || !IDEMPOTENCY_KEY.test(given))
    throw validationError({
      'Idempotency-Key': ['The Idempotency-Key header must be 1 to 255 visible ASCII characters.'],
    });
  request.idempotencyKey = given;
};

/** A test-mode endpoint in live mode is a route that does not exist. */
const refuseLiveOnTestRoutes: Hook = async (request) => {
  if (request.routeOptions.config.reference?.testOnly && request.merchant?.mode !== 'test')
    throw new ApiError('ROUTE_NOT_FOUND');
};

/** A route's own hooks of one kind, as a list. */
const hooksOf = <H>(hooks: H | H[] | undefined): H[] =>
  hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];

/**
 * Installs on a merchant route what its declaration says (src/schemas/endpoints): the key check unless it
 * is `open`, and how its body comes (`encrypted`: the envelope only; `either`: the envelope or plain
 * JSON). A route file holds its handler and nothing its declaration already says.
 */
function installDeclaredHooks(app: FastifyInstance, route: RouteOptions): void {
  const reference = route.config?.reference;
  if (!reference) return;
  if (!reference.open) route.onRequest = [app.authenticate, ...hooksOf(route.onRequest)];
  const decrypt =
    reference.body === 'encrypted'
      ? app.decryptBody
      : reference.body === 'either'
        ? app.decryptBodyIfEnveloped
        : undefined;
  if (decrypt) route.preValidation = [decrypt, ...hooksOf(route.preValidation)];
  if (route.config?.creates) route.preHandler = [readIdempotencyKey, ...hooksOf(route.preHandler)];
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: (deps.log ?? createLogger(config.LOG_LEVEL)) as FastifyBaseLogger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    trustProxy: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: answerFrameworkError,
  });

  if (deps.tracing) traceRequests(app);
  // First: it learns every route registered after it (for 405s) and answers every error.
  registerErrorHandling(app);
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  app.setValidatorCompiler(validatorCompiler);
  // The reference: every route registered from here on that declares one (src/api/openapi.ts).
  await app.register(swagger, {
    openapi: { openapi: '3.1.0' },
    transform: describeRoute,
    transformObject: finishDocument(config.baseUrl),
  });
  const metrics = createApiMetrics();
  app.addHook('onResponse', async (request, reply) => {
    // The route's template (`/api/:mode/status/:id`), never the raw URL; unmatched requests share one label.
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    metrics.httpDuration.observe(
      { method: request.method, route, status_code: String(status) },
      reply.elapsedTime / 1000,
    );
    const { page, creates } = request.routeOptions.config;
    if (status === 429) metrics.rateLimited.inc({ scope: page ? 'hosted_page' : 'api' });
    if (creates && status === 200) metrics.transactionsCreated.inc({ kind: creates });
  });
  app.route({
    ...endpoints.metrics,
    handler: async (_request, reply) => {
      const extra = deps.extraMetrics ? await deps.extraMetrics() : '';
      return reply.type(metrics.registry.contentType).send(`${await metrics.registry.metrics()}${extra}`);
    },
  });
  // While draining, every answer tells the client to reconnect: its next request goes to another process.
  const draining = deps.draining;
  if (draining) {
    app.addHook('onSend', async (_request, reply) => {
      if (draining()) void reply.header('connection', 'close');
    });
  }

  // Every JSON body keeps its numbers exact; responses write them back the same way.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, parseJsonExact(text));
    } catch {
      done(new ApiError('MALFORMED_JSON'), undefined);
    }
  });
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => done(null, parseForm(String(body))),
  );
  // Every answer, declared (`schema.response`) or not, is written by the exact-JSON serializer: the
  // declared schemas describe answers (for the reference and the edge tests), they do not rewrite them.
  app.setReplySerializer((payload) => stringifyExact(payload));
  app.setSerializerCompiler(() => (payload) => stringifyExact(payload));

  const services = { ...domainServices, ...deps.services };
  app.decorate(
    'authenticate',
    authenticate({
      findMerchant: (key) => services.findMerchantBySecretKey(deps.db, key),
      buckets: services.tokenBuckets(deps.db, {
        ratePerSecond: config.RATE_LIMIT_PER_SECOND,
        burst: config.RATE_LIMIT_BURST,
      }),
      ratePerSecond: config.RATE_LIMIT_PER_SECOND,
      burst: config.RATE_LIMIT_BURST,
    }),
  );
  const decrypt = decryptBody({
    keysOf: (merchantId) => services.merchantEncryptionKeys(deps.db, config.MASTER_KEY, merchantId),
  });
  app.decorate('decryptBody', decrypt);
  app.decorate('decryptBodyIfEnveloped', decryptBodyIfEnveloped(decrypt));

  const log = app.log as Logger;
  const routeDeps: RouteDeps = {
    config,
    db: deps.db,
    temporal: deps.temporal,
    draining: deps.draining,
    services,
    transactions: {
      db: deps.db,
      temporal: deps.temporal,
      log,
      rates: deps.rates ?? sandboxRates(deps.db),
      resolve: deps.resolve,
      config,
    },
  };
  const pageDeps: PageDeps = {
    db: deps.db,
    temporal: deps.temporal,
    masterKey: config.MASTER_KEY,
    pageLimiter: services.tokenBuckets(deps.db, {
      ratePerSecond: config.PAGE_RATE_LIMIT_PER_SECOND,
      burst: config.PAGE_RATE_LIMIT_BURST,
    }),
    secureCookies: config.baseUrl.startsWith('https://'),
    cardHoldSeconds: config.CARD_CHALLENGE_TIMEOUT_SECONDS + 3600,
    transactions: routeDeps.transactions,
    services,
    log,
  };
  for (const routes of merchantRoutes) {
    await app.register(async (scope) => {
      scope.addHook('onRoute', (route) => installDeclaredHooks(app, route));
      scope.addHook('onRequest', refuseBadParams);
      scope.addHook('preValidation', refuseLiveOnTestRoutes);
      await routes(scope.withTypeProvider<ApiTypeProvider>(), routeDeps);
    });
  }
  for (const routes of pages) {
    await app.register(async (scope) => {
      scope.addHook('onRoute', (route) => {
        route.config = { ...route.config, page: true };
      });
      scope.addHook('onRequest', refuseBadPageParams);
      await routes(scope, pageDeps);
    });
  }
  await app.register(async (scope) => codecRoutes(scope, config));
  await app.register(async (scope) => docsRoutes(scope));
  return app;
}
