import { createServer, request as forward, type IncomingMessage, type Server } from 'node:http';

/**
 * The Temporal UI settings `npm run dev` switches off: actions ops never need on transactions, and that
 * only do harm there (docs/operations.md, what the UI offers ops). Starting a workflow by hand is refused
 * by the worker anyway (a run the service did not start fails at its first step); Terminate skips every
 * compensation; a batch action does either to many transactions at once.
 */
export const UI_ACTIONS_OFF = {
  StartWorkflowDisabled: true,
  WorkflowTerminateDisabled: true,
  BatchActionsDisabled: true,
} as const;

/** The UI server's HTTP calls for those actions, refused here even when asked for without the UI. */
const REFUSED: { method: string; path: RegExp; what: string }[] = [
  { method: 'POST', path: /^\/api\/v1\/namespaces\/[^/]+\/workflows\/[^/]+$/, what: 'Starting a workflow' },
  { method: 'POST', path: /\/workflows\/[^/]+\/terminate$/, what: 'Terminating a workflow' },
  { method: 'POST', path: /^\/api\/v1\/namespaces\/[^/]+\/batch-operations\//, what: 'A batch action' },
];

/**
 * The Temporal dev server's Web UI behind a small proxy on `port`: it has no settings of its own for these
 * actions (the UI image's TEMPORAL_START_WORKFLOW_DISABLED and kin, which docker-compose.yml sets), so the
 * proxy tells the UI they are off (its `/api/v1/settings`) and refuses their calls. Everything else passes
 * through unchanged.
 */
export async function startUiProxy(options: {
  port: number;
  host: string;
  /** Where the dev server's own UI listens. */
  upstreamPort: number;
}): Promise<{ close(): Promise<void> }> {
  const server: Server = createServer((incoming, outgoing) => {
    const path = (incoming.url ?? '/').split('?')[0]!;
    const refused = REFUSED.find((r) => r.method === incoming.method && r.path.test(path));
    if (refused) {
      outgoing.writeHead(403, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          message: `${refused.what} is switched off in this UI: transactions start through the service's API (docs/operations.md).`,
        }),
      );
      return;
    }
    const settings = incoming.method === 'GET' && path === '/api/v1/settings';
    const upstream = forward(
      {
        host: '127.0.0.1',
        port: options.upstreamPort,
        method: incoming.method,
        path: incoming.url,
        headers: settings ? { ...incoming.headers, 'accept-encoding': 'identity' } : incoming.headers,
      },
      (answer) => {
        if (!settings || answer.statusCode !== 200) {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
          return;
        }
        void readAll(answer).then((body) => {
          const text = JSON.stringify({ ...(JSON.parse(body) as object), ...UI_ACTIONS_OFF });
          const { 'content-length': _length, ...headers } = answer.headers;
          outgoing.writeHead(200, { ...headers, 'content-length': Buffer.byteLength(text) }).end(text);
        });
      },
    );
    upstream.on('error', () => {
      if (!outgoing.headersSent) outgoing.writeHead(502);
      outgoing.end();
    });
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readAll(stream: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', reject);
  });
}
