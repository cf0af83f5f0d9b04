import http from 'node:http';
import https from 'node:https';
import {
  guardedLookup,
  isUnguarded,
  literalHostAllowed,
  PrivateAddressError,
  type UrlPolicy,
} from './address-policy';

export class PostTimeoutError extends Error {
  constructor() {
    super('timed out');
    this.name = 'PostTimeoutError';
  }
}

/** How long an idle connection to a merchant is kept: under the 5 s most servers keep theirs open. */
const IDLE_MS = 4_000;
/** Idle connections kept per endpoint. */
const IDLE_PER_ENDPOINT = 8;
/** The most of an answer's body read to keep its connection; a longer answer's connection is closed. */
const KEPT_ANSWER_BYTES = 64 * 1024;

/**
 * Connections to merchants' endpoints kept open between deliveries, so a webhook does not pay a TCP (and
 * TLS) handshake each time. One pool per transport, mode and address policy: a socket opened under the
 * guarded policy connected to an address `guardedLookup` allowed, and only a delivery under that policy
 * reuses it; test mode's sockets are never a live delivery's.
 */
export class MerchantConnections {
  private readonly agents = new Map<string, http.Agent>();

  agentFor(protocol: 'http:' | 'https:', policy: UrlPolicy): http.Agent {
    const key = `${protocol} ${policy.mode} ${isUnguarded(policy) ? 'open' : 'guarded'}`;
    let agent = this.agents.get(key);
    if (!agent) {
      const options = { keepAlive: true, timeout: IDLE_MS, maxFreeSockets: IDLE_PER_ENDPOINT };
      agent = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
      this.agents.set(key, agent);
    }
    return agent;
  }

  /** Closes every connection, idle or in use (idle ones never keep the process alive meanwhile). */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

/**
 * POSTs a body to a merchant URL and answers its HTTP status; redirects are not followed. The host is
 * judged by `policy` on the address each new connection uses, so the guard holds at delivery time whatever
 * DNS answered when the URL was accepted. A connection kept from an earlier delivery
 * (`MerchantConnections`) that is reset before any answer (the merchant closed it as this one went out) is
 * not taken as the merchant's answer: the POST is sent once more, at once, on a new connection, within the
 * same deadline. The merchant may then get it twice (docs/webhooks.md).
 */
export function postToMerchant(
  target: string,
  options: {
    headers: Record<string, string>;
    body: string;
    timeoutMs: number;
    policy: UrlPolicy;
    connections: MerchantConnections;
  },
): Promise<number> {
  const url = new URL(target);
  if (!literalHostAllowed(url, options.policy)) return Promise.reject(new PrivateAddressError(url.hostname));
  const protocol = url.protocol === 'https:' || url.protocol === 'http:' ? url.protocol : undefined;
  if (!protocol) return Promise.reject(new Error(`unsupported protocol ${url.protocol}`));
  const transport = protocol === 'https:' ? https : http;
  const deadlineAt = Date.now() + options.timeoutMs;
  /** `kept`: a pooled connection, reused when one is idle; else a new one, closed after the answer. */
  const send = (kept: boolean): Promise<number> =>
    new Promise((resolve, reject) => {
      const timeoutMs = deadlineAt - Date.now();
      if (timeoutMs <= 0) return reject(new PostTimeoutError());
      const request = transport.request(url, {
        method: 'POST',
        headers: { ...options.headers, 'content-length': String(Buffer.byteLength(options.body)) },
        lookup: guardedLookup(options.policy),
        agent: kept ? options.connections.agentFor(protocol, options.policy) : false,
        timeout: timeoutMs,
      });
      let answered = false;
      // Until the request is over, its answer read to the end: a connection whose answer never ends is
      // closed at the deadline, not kept.
      const deadline = setTimeout(() => request.destroy(new PostTimeoutError()), timeoutMs);
      request.on('close', () => clearTimeout(deadline));
      request.on('timeout', () => request.destroy(new PostTimeoutError()));
      request.on('response', (response) => {
        answered = true;
        resolve(response.statusCode ?? 0);
        // An answer cut short (by us, or by the merchant) is no error once its status is known.
        response.on('error', () => undefined);
        if (!kept) return void request.destroy();
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > KEPT_ANSWER_BYTES) request.destroy();
        });
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        if (answered) return;
        if (kept && request.reusedSocket && error.code === 'ECONNRESET') resolve(send(false));
        else reject(error);
      });
      request.end(options.body);
    });
  return send(true);
}
