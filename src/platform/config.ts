import { z } from 'zod';

const duration = z.coerce.number().int().positive();
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const schema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Public address merchants and customers reach; hosted-page links are built from it. */
  BASE_URL: z.url().optional(),
  DATABASE_URL: z.string().min(1),
  DATABASE_POOL_SIZE: z.coerce.number().int().positive().default(10),
  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('payments'),
  /** 32 bytes as 64 hex characters: encrypts merchant secrets at rest. */
  MASTER_KEY: z.string().regex(/^[0-9a-f]{64}$/i, 'must be 64 hex characters (32 bytes)'),
  /** Comma-separated `id:64hex` keys for Temporal payloads; the first one encrypts, all of them decrypt. */
  PAYLOAD_KEYS: z
    .string()
    .regex(
      /^[A-Za-z0-9_-]+:[0-9a-fA-F]{64}(,[A-Za-z0-9_-]+:[0-9a-fA-F]{64})*$/,
      'must be id:64hex[,id:64hex...]',
    ),
  /** Where ops open the Temporal UI: `ops stuck` prints links into it (`npm run dev` sets its own). */
  TEMPORAL_UI_URL: z.url().optional(),
  /** Bearer token for the Temporal UI codec endpoint. */
  CODEC_TOKEN: z.string().min(16).optional(),
  /** Comma-separated origins allowed to call the codec endpoint (the Temporal UI). */
  CODEC_CORS_ORIGINS: z.string().default('http://127.0.0.1:8233,http://localhost:8233'),
  /** Let loopback callers use the codec endpoint without the token (local development only). */
  CODEC_ALLOW_LOOPBACK: bool.default(false),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  RATE_LIMIT_PER_SECOND: z.coerce.number().int().positive().default(100),
  RATE_LIMIT_BURST: z.coerce.number().int().positive().default(200),
  PAGE_RATE_LIMIT_PER_SECOND: z.coerce.number().int().positive().default(10),
  PAGE_RATE_LIMIT_BURST: z.coerce.number().int().positive().default(30),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024),
  /** How long a create waits for its workflow's first answer before answering PENDING. */
  FIRST_ANSWER_TIMEOUT_MS: duration.default(5000),
  /** How long an old secret key keeps working after a rotation. */
  KEY_ROTATION_OVERLAP_HOURS: z.coerce.number().int().min(0).default(24),
  CARD_CHALLENGE_TIMEOUT_SECONDS: duration.default(15 * 60),
  PAYOUT_VERIFICATION_TIMEOUT_SECONDS: duration.default(24 * 60 * 60),
  /** How long a payout keeps trying while every payout terminal refuses it (nothing sent). */
  PAYOUT_SEND_WINDOW_SECONDS: duration.default(60 * 60),
  /** Comma-separated seconds between webhook attempts; the last gap repeats until the window closes. */
  WEBHOOK_RETRY_SCHEDULE_SECONDS: z
    .string()
    .regex(/^\d+(,\d+)*$/)
    .default('5,300,1800,7200,18000,36000,36000'),
  WEBHOOK_RETRY_WINDOW_SECONDS: duration.default(3 * 24 * 60 * 60),
  WEBHOOK_TIMEOUT_MS: duration.default(10_000),
  /**
   * Let live-mode terminals use the sandbox connectors (they approve any card and move no money). Off in
   * production: a live terminal on a sandbox connector then stops the service at start-up, naming it.
   * `npm run dev` turns it on.
   */
  ALLOW_SANDBOX_IN_LIVE: bool.default(false),
  /** Where the Stripe connector sends its API calls; Stripe's own API unless set (stripe-mock in tests). */
  STRIPE_API_URL: z.url().optional(),
  /**
   * Workflows a worker keeps in memory between their tasks. One waiting past this is evicted and replayed
   * from its (short) history when its next task comes; the SDK's default grows with the heap and held
   * every waiting transaction (bench/README.md).
   */
  WORKER_MAX_CACHED_WORKFLOWS: duration.default(500),
  /** How often a worker asks the registered EVM nodes for new blocks (docs/connectors.md). */
  CHAIN_POLL_MS: duration.default(2000),
  /**
   * How often the reconciliation schedule runs (docs/reconciliation.md), in seconds; 0 makes no schedule
   * (`npx payments recon run` still runs one).
   */
  RECONCILIATION_EVERY_SECONDS: z.coerce.number().int().nonnegative().default(900),
  /** How far behind now a scheduled run's window ends, so what is still settling waits for the next. */
  RECONCILIATION_LAG_SECONDS: z.coerce.number().int().nonnegative().default(300),
  /** Allow webhook and redirect hosts on loopback or private networks in live mode. */
  ALLOW_PRIVATE_URLS: bool.default(false),
  /** Which processes this one runs. */
  ROLE: z.enum(['all', 'api', 'worker']).default('all'),
  /**
   * After SIGTERM the API answers `/readyz` 503 but keeps serving for this long, so a load balancer stops
   * sending it requests before it stops accepting them (docs/operations.md, shutdown). `npm run dev` uses 0.
   */
  SHUTDOWN_DRAIN_SECONDS: z.coerce.number().int().min(0).default(5),
  /** How long in-flight requests and activities get to finish after a stop signal before the process exits. */
  SHUTDOWN_GRACE_SECONDS: duration.default(30),
  /** Where a `ROLE=worker` process serves `/metrics`, `/healthz` and `/readyz` (0 picks a free port). */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /** Trace API requests, workflows and activities with OpenTelemetry, exported over OTLP/HTTP. */
  TRACING: bool.default(false),
  /**
   * Whether a worker captures a stack trace for each promise its workflows make, for the Temporal UI's Stack
   * Trace tab (workflows/no-stack-traces.ts): about 12 % of a worker's CPU per transaction when on.
   */
  WORKFLOW_STACK_TRACES: bool.default(false),
  /** Where traces go when TRACING is on (the OpenTelemetry variable of the same name). */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().default('http://127.0.0.1:4318'),
  OTEL_SERVICE_NAME: z.string().min(1).default('payments'),
});

export type Config = z.infer<typeof schema> & { baseUrl: string };

/** The CLI's configuration: the service's, with the payload keys needed only to talk to Temporal. */
const cliSchema = schema.partial({ PAYLOAD_KEYS: true });
export type CliConfig = z.infer<typeof cliSchema> & { baseUrl: string };

export class ConfigError extends Error {}

function parse<S extends z.ZodType<{ BASE_URL?: string; HOST: string; PORT: number }>>(
  parser: S,
  env: NodeJS.ProcessEnv,
): z.infer<S> & { baseUrl: string } {
  const parsed = parser.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const config = parsed.data;
  return {
    ...config,
    baseUrl: (config.BASE_URL ?? `http://${config.HOST}:${config.PORT}`).replace(/\/$/, ''),
  };
}

/** Parses the environment once; throws naming every bad key. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return parse(schema, env);
}

/** The same parser, for the CLI. */
export function loadCliConfig(env: NodeJS.ProcessEnv): CliConfig {
  return parse(cliSchema, env);
}

export function webhookSchedule(
  config: Pick<Config, 'WEBHOOK_RETRY_SCHEDULE_SECONDS' | 'WEBHOOK_RETRY_WINDOW_SECONDS'>,
): { delaysSeconds: number[]; windowSeconds: number } {
  return {
    delaysSeconds: config.WEBHOOK_RETRY_SCHEDULE_SECONDS.split(',').map(Number),
    windowSeconds: config.WEBHOOK_RETRY_WINDOW_SECONDS,
  };
}
