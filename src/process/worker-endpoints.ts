import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WorkerEndpoints {
  url: string;
  close(): Promise<void>;
}

/**
 * What a `ROLE=worker` process serves on `METRICS_PORT` (docs/operations.md): `/metrics` for Prometheus,
 * `/healthz` while the process runs, `/readyz` while its worker polls for tasks (503 once it drains).
 */
export async function serveWorkerEndpoints(options: {
  host: string;
  port: number;
  metrics: () => Promise<{ contentType: string; text: string }>;
  ready: () => boolean;
}): Promise<WorkerEndpoints> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      response.end(JSON.stringify(body));
    };
    if (request.method !== 'GET') return json(405, { message: 'Only GET is served here.' });
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz') {
      const ready = options.ready();
      return json(ready ? 200 : 503, { status: ready ? 'ok' : 'draining' });
    }
    if (path === '/metrics') {
      options.metrics().then(
        ({ contentType, text }) => {
          response.writeHead(200, { 'content-type': contentType });
          response.end(text);
        },
        () => json(500, { message: 'Metrics could not be collected.' }),
      );
      return;
    }
    json(404, { message: 'Not found: this port serves /metrics, /healthz and /readyz.' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
