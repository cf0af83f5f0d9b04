import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { Config } from '../config';
import type { Db } from '../db/client';
import { createLogger, type Logger } from '../log';
import { ApiError } from '../errors';
import { registerErrorHandling } from './plugins/errors';
import { authenticate } from './plugins/auth';
import { decryptBody } from './plugins/envelope';
import { parseJsonExact, stringifyExact } from '../lib/json';
import { healthRoutes } from './routes/health';
import { currencyRoutes } from './routes/currencies';
import { statusRoutes } from './routes/status';
import { walletRoutes } from './routes/wallets';
import { pruneBuckets } from '../rate-limit';
import { cardRoutes } from './routes/card';
import { sandboxRates, type RateSource } from '../lib/quotes';
import { cardCheckoutRoutes } from './routes/card-checkout';
import { payoutRoutes } from './routes/payout';
import { payoutVerificationRoutes } from './routes/payout-verification';
import { cryptoRoutes } from './routes/crypto';
import { cryptoDepositRoutes } from './routes/crypto-deposit';
import { cryptoCheckoutRoutes } from './routes/crypto-checkout';
import { codecRoutes } from './routes/codec';
import { docsRoutes } from './routes/docs';
import { parseForm, type PageDeps } from './pages/hosted';
import type { CreateDeps } from '../transactions/create';

export interface AppDeps {
  config: Config;
  db: Db;
  temporal: Client;
  log?: Logger;
  /** Prices for crypto quotes; the sandbox reads the catalogue. */
  rates?: RateSource;
}

export type RouteDeps = AppDeps & { createDeps: CreateDeps; rates: RateSource };

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

declare module 'fastify' {
  interface FastifyInstance {
    authenticate: Hook;
    decryptBody: Hook;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._-]{8,64}$/;

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
    routerOptions: { ignoreTrailingSlash: true },
  });

  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });

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
  app.setReplySerializer((payload) => stringifyExact(payload));

  registerErrorHandling(app);
  app.decorate(
    'authenticate',
    authenticate({
      db: deps.db,
      ratePerSecond: config.RATE_LIMIT_PER_SECOND,
      burst: config.RATE_LIMIT_BURST,
    }),
  );
  app.decorate('decryptBody', decryptBody({ db: deps.db, masterKey: config.MASTER_KEY }));

  const pruner = setInterval(() => {
    pruneBuckets(deps.db).catch((error: unknown) =>
      app.log.warn({ err: error }, 'rate limit pruning failed'),
    );
  }, 10 * 60_000);
  pruner.unref();
  app.addHook('onClose', async () => clearInterval(pruner));

  const routeDeps: RouteDeps = {
    ...deps,
    rates: deps.rates ?? sandboxRates(deps.db),
    createDeps: {
      db: deps.db,
      temporal: deps.temporal,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      firstAnswerTimeoutMs: config.FIRST_ANSWER_TIMEOUT_MS,
      log: app.log as Logger,
    },
  };
  await app.register(async (scope) => healthRoutes(scope, deps));
  await app.register(async (scope) => codecRoutes(scope, config));
  await app.register(docsRoutes);
  const pageDeps: PageDeps = {
    db: deps.db,
    temporal: deps.temporal,
    masterKey: config.MASTER_KEY,
    ratePerSecond: config.PAGE_RATE_LIMIT_PER_SECOND,
    burst: config.PAGE_RATE_LIMIT_BURST,
    secureCookies: config.baseUrl.startsWith('https://'),
  };
  await app.register(async (scope) => cardRoutes(scope, routeDeps));
  await app.register(async (scope) => cardCheckoutRoutes(scope, pageDeps));
  await app.register(async (scope) => payoutRoutes(scope, routeDeps));
  await app.register(async (scope) => payoutVerificationRoutes(scope, pageDeps));
  await app.register(async (scope) => cryptoRoutes(scope, routeDeps));
  await app.register(async (scope) => cryptoDepositRoutes(scope, routeDeps));
  await app.register(async (scope) => cryptoCheckoutRoutes(scope, pageDeps));
  await app.register(async (scope) => currencyRoutes(scope, deps));
  await app.register(async (scope) => statusRoutes(scope, deps));
  await app.register(async (scope) => walletRoutes(scope, deps));
  return app;
}
