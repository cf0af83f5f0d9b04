import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The API process's Prometheus metrics (docs/operations.md, metrics), in a registry of its own so two apps
 * in one process (the tests) never share counters. Labels are route templates, never raw URLs: an id in a
 * label would grow the series without bound and could carry data.
 */
export function createApiMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by method, route template and status code.',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    transactionsCreated: new Counter({
      name: 'payments_transactions_created_total',
      help: 'Transaction creates answered 200 (new or replayed), by kind.',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'payments_rate_limited_total',
      help: 'Requests refused with 429, by what was limited: the merchant API (per key) or the hosted pages.',
      labelNames: ['scope'] as const,
      registers: [registry],
    }),
  };
}

export type ApiMetrics = ReturnType<typeof createApiMetrics>;

/**
 * The worker's Prometheus metrics (docs/operations.md, metrics): what the activities did, counted where it
 * happened. A `ROLE=worker` process serves them with the Temporal SDK's own metrics on `METRICS_PORT`, and
 * the Node.js process's own (`process`: memory, heap, CPU, event-loop lag), which with `ROLE=all` the API's
 * registry already has: there they are part of the API's `/metrics`.
 */
export function createWorkerMetrics(options: { process?: boolean } = {}) {
  const registry = new Registry();
  if (options.process) collectDefaultMetrics({ register: registry });
  return {
    registry,
    transactionsFinal: new Counter({
      name: 'payments_transactions_final_total',
      help: 'Transactions that reached a final status (recorded once, when the status table first shows it), by kind and status.',
      labelNames: ['kind', 'status'] as const,
      registers: [registry],
    }),
    webhookAttempts: new Counter({
      name: 'payments_webhook_attempts_total',
      help: 'Webhook delivery attempts, by outcome: delivered (the merchant answered 2xx in time) or failed.',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    webhooksUndelivered: new Counter({
      name: 'payments_webhooks_undelivered_total',
      help: 'Webhook events given up on: the retry window closed without a 2xx.',
      registers: [registry],
    }),
    ledgerOperations: new Counter({
      name: 'payments_ledger_operations_total',
      help: 'Wallet ledger steps completed, by operation (an activity retried after a lost completion counts again).',
      labelNames: ['operation'] as const,
      registers: [registry],
    }),
    chainScanSeconds: new Histogram({
      name: 'payments_chain_scan_seconds',
      help: "One watcher pass over a chain node: reading its confirmed blocks and handing over the deposits they paid, by the node's network and mode.",
      labelNames: ['network', 'mode'] as const,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;
