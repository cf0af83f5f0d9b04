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

/**
 * The workflow list's columns on a browser's first visit: the transaction's own status (a search
 * attribute every transaction workflow keeps) pinned beside the workflow's, so a declined payment (Completed,
 * FAILED), one waiting (Running, PENDING or REDIRECT) and a paid one (Completed, SUCCESS) are told apart
 * without setting anything up. The UI keeps each namespace's columns in the browser's storage
 * (`namespace-workflow-table-columns`); a namespace there with columns of its own keeps them.
 */
export const DEFAULT_LIST_COLUMNS = [
  { label: 'Status', pinned: true },
  { label: 'TransactionStatus', pinned: true },
  { label: 'Workflow ID', pinned: false },
  { label: 'Type', pinned: false },
  { label: 'OrderId', pinned: false },
  { label: 'Start', pinned: false },
  { label: 'End', pinned: false },
];

/** Served by the proxy, and loaded first by every UI page (a script of the same origin, as the UI's own). */
const DEFAULTS_SCRIPT = '/_payments/ui-defaults.js';
const defaultsScript = `try {
  var key = 'namespace-workflow-table-columns';
  var columns = JSON.parse(localStorage.getItem(key) || '{}') || {};
  var page = /^\\/namespaces\\/([^/]+)/.exec(location.pathname);
  var changed = false;
  ['default'].concat(page ? [decodeURIComponent(page[1])] : []).forEach(function (namespace) {
    if (!columns[namespace] || !columns[namespace].length) {
      columns[namespace] = ${JSON.stringify(DEFAULT_LIST_COLUMNS)};
      changed = true;
    }
  });
  if (changed) localStorage.setItem(key, JSON.stringify(columns));
} catch (error) {}
`;

/** The UI server's HTTP calls for those actions, refused here even when asked for without the UI. */
const REFUSED: { method: string; path: RegExp; what: string }[] = [
  { method: 'POST', path: /^\/api\/v1\/namespaces\/[^/]+\/workflows\/[^/]+$/, what: 'Starting a workflow' },
  { method: 'POST', path: /\/workflows\/[^/]+\/terminate$/, what: 'Terminating a workflow' },
  { method: 'POST', path: /^\/api\/v1\/namespaces\/[^/]+\/batch-operations\//, what: 'A batch action' },
];

/**
 * The Temporal dev server's Web UI behind a small proxy on `port`: it has no settings of its own for these
 * actions (the UI image's TEMPORAL_START_WORKFLOW_DISABLED and kin, which docker-compose.yml sets), so the
 * proxy tells the UI they are off (its `/api/v1/settings`) and refuses their calls. Its pages load the list's
 * default columns first (DEFAULT_LIST_COLUMNS). Everything else passes through unchanged.
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
    if (incoming.method === 'GET' && path === DEFAULTS_SCRIPT) {
      outgoing
        .writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-cache' })
        .end(defaultsScript);
      return;
    }
    const settings = incoming.method === 'GET' && path === '/api/v1/settings';
    // A page (the UI answers every route of its own with the same HTML) is read to add the defaults' script.
    const page =
      incoming.method === 'GET' &&
      !path.startsWith('/api/') &&
      /text\/html/.test(incoming.headers.accept ?? '');
    const rewritten = settings || page;
    const upstream = forward(
      {
        host: '127.0.0.1',
        port: options.upstreamPort,
        method: incoming.method,
        path: incoming.url,
        headers: rewritten ? { ...incoming.headers, 'accept-encoding': 'identity' } : incoming.headers,
      },
      (answer) => {
        const html = /text\/html/.test(String(answer.headers['content-type'] ?? ''));
        if (!rewritten || answer.statusCode !== 200 || (page && !html)) {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
          return;
        }
        void readAll(answer).then((body) => {
          const text = settings
            ? JSON.stringify({ ...(JSON.parse(body) as object), ...UI_ACTIONS_OFF })
            : body.replace(/<head>/i, `<head><script src="${DEFAULTS_SCRIPT}"></script>`);
          // Sent whole, with its own length: the upstream's length, chunking and entity tag were for the original.
          const {
            'content-length': _length,
            'transfer-encoding': _chunked,
            etag: _etag,
            ...headers
          } = answer.headers;
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
