/** The service itself: liveness, readiness, metrics. */
import { endpoint } from './declare';
import { Health, Readiness } from '../answers';

export const health = endpoint({
  method: 'GET',
  url: '/healthz',
  schema: {
    operationId: 'health',
    tags: ['Operations'],
    summary: 'Liveness',
    description: 'The process is up.',
    response: { 200: Health },
  },
  config: { reference: { answer: { description: 'Up.' }, open: true } },
});

export const readiness = endpoint({
  method: 'GET',
  url: '/readyz',
  schema: {
    operationId: 'readiness',
    tags: ['Operations'],
    summary: 'Readiness',
    description:
      'Postgres and Temporal are reachable; `503` naming what is not, or while shutting down. `chains` lists the chain nodes deposits are watched on and whether a worker watches each now.',
    response: { 200: Readiness, 503: Readiness },
  },
  config: { reference: { answer: { description: 'Ready.' }, open: true } },
});

export const metrics = endpoint({
  method: 'GET',
  url: '/metrics',
  schema: {
    operationId: 'metrics',
    tags: ['Operations'],
    summary: 'Prometheus metrics',
    description: "This process's metrics in the Prometheus text format (docs/operations.md).",
  },
  config: { reference: { answer: { description: 'The metrics.' }, open: true } },
});
