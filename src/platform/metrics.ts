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
