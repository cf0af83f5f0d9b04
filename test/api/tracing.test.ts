/**
 * Optional tracing (docs/operations.md, tracing): with TRACING on, a card payment's request, its workflow
 * and its activities are spans of one trace, exported over OTLP/HTTP, with no card data in them.
 */
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { cleanUpAfterAll, until } from '../faults/harness';
import { startServiceProcess } from '../helpers/service-process';
import { cardRequest, encryptForMerchant } from '../helpers/merchant-client';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

const cleanups = cleanUpAfterAll();

/** An OpenTelemetry collector's OTLP/HTTP JSON endpoint on loopback, keeping what it is sent. */
async function startCollector() {
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces') bodies.push(Buffer.concat(chunks).toString('utf8'));
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const spans = (): ExportedSpan[] =>
    bodies.flatMap((body) => {
      const parsed = JSON.parse(body) as {
        resourceSpans: { scopeSpans: { spans: ExportedSpan[] }[] }[];
      };
      return parsed.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    });
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('tracing', () => {
  it('follows a card payment from its request through its workflow and activities in one trace', async () => {
    const collector = await startCollector();
    cleanups.push(() => collector.close());
    const { baseUrl, merchant } = await startServiceProcess(
      'traced',
      {
        TRACING: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      },
      cleanups,
    );

    const card = '4242424242424242';
    const response = await fetch(`${baseUrl}/api/v1/test/card`, {
      method: 'POST',
      headers: { authorization: `Bearer ${merchant.test_secret_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        payload: encryptForMerchant(
          cardRequest({ card_number: card, card_cvv: '737' }),
          merchant.encryption_key,
        ),
      }),
    });
    expect(response.status).toBe(200);
    const { status } = (await response.json()) as { status: string };
    expect(status).toBe('SUCCESS');

    // The request's span, and the workflow's and its activities' spans under the same trace.
    let request: ExportedSpan | undefined;
    await until(
      'the spans to be exported',
      async () => {
        const spans = collector.spans();
        request = spans.find((span) => span.name === 'POST /api/v1/:mode/card');
        if (!request) return false;
        const inTrace = spans.filter((span) => span.traceId === request!.traceId).map((span) => span.name);
        return (
          inTrace.some((name) => name.startsWith('RunWorkflow:cardPayment')) &&
          inTrace.some((name) => name.startsWith('RunActivity:'))
        );
      },
      60_000,
    );
    const inTrace = collector.spans().filter((span) => span.traceId === request!.traceId);
    expect(inTrace.length).toBeGreaterThan(3);
    // No span (names, attributes, events) carries the card number or its CVV.
    const exported = collector.bodies.join('\n');
    expect(exported).not.toContain(card);
    expect(exported).not.toContain('"737"');
  }, 240_000);
});
