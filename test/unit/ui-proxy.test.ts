import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIST_COLUMNS, UI_ACTIONS_OFF, startUiProxy } from '../../src/dev/ui-proxy';
import { freePort } from '../../src/dev/postgres';

/** The UI `npm run dev` serves: the dev server's own, with what ops never need on transactions off. */
let upstream: Server;
let proxy: Awaited<ReturnType<typeof startUiProxy>>;
let base = '';
const reached: string[] = [];

beforeAll(async () => {
  upstream = createServer((request, response) => {
    reached.push(`${request.method} ${request.url}`);
    if (request.url === '/api/v1/settings') {
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({ Version: '2.54.1', StartWorkflowDisabled: false, WorkflowResetDisabled: false }),
      );
      return;
    }
    if (/text\/html/.test(request.headers.accept ?? '')) {
      // In chunks, as the UI server sends it.
      response.setHeader('content-type', 'text/html');
      response.write('<!doctype html><html><head>');
      response.end('<title>Temporal</title></head><body></body></html>');
      return;
    }
    request.resume();
    request.on('end', () => response.end('upstream'));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const port = await freePort();
  const address = upstream.address();
  proxy = await startUiProxy({
    host: '127.0.0.1',
    port,
    upstreamPort: typeof address === 'object' && address ? address.port : 0,
  });
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await proxy?.close();
  upstream?.close();
});

describe('the dev Temporal UI proxy', () => {
  it('tells the UI that Start Workflow, Terminate and batch actions are off, and leaves the rest', async () => {
    const settings = (await (await fetch(`${base}/api/v1/settings`)).json()) as Record<string, unknown>;
    expect(settings).toMatchObject({ ...UI_ACTIONS_OFF, Version: '2.54.1', WorkflowResetDisabled: false });
  });

  it.each([
    ['/api/v1/namespaces/default/workflows/PAforged', 'Starting a workflow'],
    ['/api/v1/namespaces/default/workflows/PApaid/terminate', 'Terminating a workflow'],
    ['/api/v1/namespaces/default/batch-operations/job-1', 'A batch action'],
  ])('refuses POST %s without passing it on', async (path, what) => {
    const before = reached.length;
    const answer = await fetch(`${base}${path}`, { method: 'POST', body: '{}' });
    expect(answer.status).toBe(403);
    expect(((await answer.json()) as { message: string }).message).toContain(`${what} is switched off`);
    expect(reached.length).toBe(before);
  });

  it('passes every other call on, ops updates and Reset among them', async () => {
    for (const path of [
      '/api/v1/namespaces/default/workflows/PApaid/update/retryNow',
      '/api/v1/namespaces/default/workflows/PApaid/reset',
    ]) {
      const answer = await fetch(`${base}${path}`, { method: 'POST', body: '{"actor":"alice"}' });
      expect(await answer.text()).toBe('upstream');
    }
    expect(await (await fetch(`${base}/namespaces/default/workflows`)).text()).toBe('upstream');
  });

  it("loads the list's default columns first on every page, without changing a browser's own", async () => {
    const page = await (
      await fetch(`${base}/namespaces/default/workflows`, { headers: { accept: 'text/html' } })
    ).text();
    const [, src] = /<head><script src="([^"]+)"><\/script><title>/.exec(page) ?? [];
    expect(src).toBeDefined();
    const script = await (await fetch(`${base}${src}`)).text();
    // Run as the browser would, against a storage of its own.
    const storage = (entries: Record<string, string>) => ({
      entries,
      getItem: (key: string) => entries[key] ?? null,
      setItem: (key: string, value: string) => void (entries[key] = value),
    });
    const run = (entries: Record<string, string>, pathname: string) => {
      const given = storage(entries);
      new Function('localStorage', 'location', script)(given, { pathname });
      const saved = given.entries['namespace-workflow-table-columns'];
      return saved === undefined ? undefined : (JSON.parse(saved) as Record<string, unknown>);
    };
    expect(run({}, '/namespaces/payments/workflows')).toEqual({
      default: DEFAULT_LIST_COLUMNS,
      payments: DEFAULT_LIST_COLUMNS,
    });
    expect(DEFAULT_LIST_COLUMNS.slice(0, 2).map((c) => c.label)).toEqual(['Status', 'TransactionStatus']);
    // Columns a browser chose stay as they are.
    const chosen = { default: [{ label: 'Status', pinned: true }] };
    expect(
      run({ 'namespace-workflow-table-columns': JSON.stringify(chosen) }, '/namespaces/default'),
    ).toEqual(chosen);
  });
});
