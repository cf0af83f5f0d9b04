import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PrivateAddressError, type Resolver, type UrlPolicy } from '../../src/net/address-policy';
import { MerchantConnections, PostTimeoutError, postToMerchant } from '../../src/net/post';

/** A merchant endpoint on loopback that counts the connections and requests it takes. */
interface Endpoint {
  url: (host?: string) => string;
  connections: number;
  /** Connections closed so far, by either side. */
  closed: number;
  requests: number;
  close(): Promise<void>;
}

async function endpoint(handle: (n: number, req: IncomingMessage, res: ServerResponse) => void) {
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    state.requests += 1;
    handle(state.requests, req, res);
  });
  server.on('connection', (socket) => {
    state.connections += 1;
    sockets.add(socket);
    socket.on('close', () => (state.closed += 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const state: Endpoint = {
    url: (host = '127.0.0.1') => `http://${host}:${port}/hook`,
    connections: 0,
    closed: 0,
    requests: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return state;
}

const ok = (_n: number, req: IncomingMessage, res: ServerResponse) => {
  req.resume();
  req.on('end', () => res.writeHead(200).end('ok'));
};

const toLoopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
const testMode: UrlPolicy = { mode: 'test', allowPrivate: false, resolve: toLoopback };
/** Waits until `done`, for at most `ms` (a loaded machine is slow, not wrong). */
async function until(done: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

const post = (connections: MerchantConnections, url: string, policy = testMode, timeoutMs = 5_000) =>
  postToMerchant(url, { headers: {}, body: '{"event_id":"evt_1"}', timeoutMs, policy, connections });

let connections: MerchantConnections;
let server: Endpoint | undefined;
beforeEach(() => {
  connections = new MerchantConnections();
});
afterEach(async () => {
  connections.close();
  await server?.close();
  server = undefined;
});

describe('connections to a merchant endpoint', () => {
  it('are kept between deliveries: three webhooks, one connection', async () => {
    server = await endpoint(ok);
    for (let i = 0; i < 3; i++) expect(await post(connections, server.url())).toBe(200);
    expect(server.requests).toBe(3);
    expect(server.connections).toBe(1);
  });

  it('replace a kept connection the merchant reset as the next webhook went out, once', async () => {
    // The second request arrives on the kept connection, which the endpoint resets without an answer: the
    // race between a server closing an idle connection and a client reusing it.
    server = await endpoint((n, req, res) => {
      if (n === 2) req.socket.resetAndDestroy();
      else ok(n, req, res);
    });
    expect(await post(connections, server.url())).toBe(200);
    expect(await post(connections, server.url())).toBe(200);
    expect(server.requests).toBe(3);
    expect(server.connections).toBe(2);
  });

  it('send again on a new connection, not on another kept one the merchant closed too', async () => {
    // Two kept connections, then the endpoint resets whatever arrives on either (a restart closing them).
    const old = new Set<Socket>();
    let resetting = false;
    server = await endpoint((n, req, res) => {
      if (resetting && old.has(req.socket)) return req.socket.resetAndDestroy();
      old.add(req.socket);
      ok(n, req, res);
    });
    await Promise.all([post(connections, server.url()), post(connections, server.url())]);
    expect(server.connections).toBe(2);
    resetting = true;
    expect(await post(connections, server.url())).toBe(200);
    expect(server.connections).toBe(3);
  });

  it('fail the delivery when the new connection is reset too: sent again once, no more', async () => {
    server = await endpoint((n, req, res) => {
      if (n >= 2) req.socket.resetAndDestroy();
      else ok(n, req, res);
    });
    expect(await post(connections, server.url())).toBe(200);
    await expect(post(connections, server.url())).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(server.requests).toBe(3);
  });

  it('fail the delivery when a fresh connection is reset: only a kept one is replaced', async () => {
    server = await endpoint((_n, req) => req.socket.resetAndDestroy());
    await expect(post(connections, server.url())).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(server.requests).toBe(1);
  });

  it('are not kept when the answer is still coming at the deadline', async () => {
    server = await endpoint((n, req, res) => {
      req.resume();
      req.on('end', () => {
        if (n > 1) return void res.writeHead(200).end('ok');
        // The first answer's body goes on, a byte every 100 ms: never idle long enough for a socket timeout.
        res.writeHead(200);
        const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write('.')), 100);
      });
    });
    expect(await post(connections, server.url(), testMode, 2_000)).toBe(200);
    await until(() => server!.closed > 0, 4_000);
    expect(server.closed).toBe(1);
    expect(await post(connections, server.url())).toBe(200);
    expect(server.connections).toBe(2);
  }, 10_000);

  it('are not kept after an answer too long to read', async () => {
    server = await endpoint((n, req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end(n === 1 ? 'x'.repeat(1024 * 1024) : 'ok'));
    });
    expect(await post(connections, server.url())).toBe(200);
    // The answer is read, and cut short, after its status has been answered: well within the idle timeout
    // (4 s), which would close a kept connection too.
    await until(() => server!.closed > 0, 2_000);
    expect(server.closed).toBe(1);
    expect(await post(connections, server.url())).toBe(200);
    expect(server.connections).toBe(2);
  });

  it('time out as before when no answer comes', async () => {
    server = await endpoint(() => undefined);
    await expect(post(connections, server.url(), testMode, 200)).rejects.toBeInstanceOf(PostTimeoutError);
  });

  it('are never shared between test and live, nor between the guarded and the open policy', async () => {
    server = await endpoint(ok);
    const name = server.url('hooks.merchant.example');
    expect(await post(connections, name)).toBe(200);
    // Live with private URLs allowed: open like test mode, yet a pool of its own.
    expect(await post(connections, name, { mode: 'live', allowPrivate: true, resolve: toLoopback })).toBe(
      200,
    );
    expect(server.connections).toBe(2);
    // Live and guarded: the test-mode connection to the same host and port is not reused, so the host's
    // loopback address is judged, and refused.
    await expect(
      post(connections, name, { mode: 'live', allowPrivate: false, resolve: toLoopback }),
    ).rejects.toBeInstanceOf(PrivateAddressError);
    expect(server.requests).toBe(2);
  });
});
