import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Config } from './config';

export interface Tracing {
  resource: Resource;
  spanProcessor: SpanProcessor;
  /** Sends what is still buffered and stops. */
  shutdown(): Promise<void>;
}

let installed: Tracing | undefined;

/**
 * OpenTelemetry tracing for this process when `TRACING` is on (docs/operations.md, tracing): spans go in
 * batches to the OTLP/HTTP endpoint, and the W3C trace context carries a request's trace through Temporal
 * into its workflow and activities. Installed once per process; off, it costs nothing.
 */
export function startTracing(
  config: Pick<Config, 'TRACING' | 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_SERVICE_NAME' | 'ROLE'>,
): Tracing | undefined {
  if (!config.TRACING) return undefined;
  if (installed) return installed;
  const resource = new Resource({ 'service.name': config.OTEL_SERVICE_NAME, 'payments.role': config.ROLE });
  const exporter = new OTLPTraceExporter({
    url: `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, '')}/v1/traces`,
  });
  const spanProcessor = new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // The global tracer, the async-context manager and the W3C propagator the Temporal interceptors use.
  provider.register();
  installed = { resource, spanProcessor, shutdown: () => provider.shutdown() };
  return installed;
}
