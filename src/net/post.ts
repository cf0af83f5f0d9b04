import http from 'node:http';
import https from 'node:https';
import { guardedLookup, literalHostAllowed, PrivateAddressError, type UrlPolicy } from './address-policy';

export class PostTimeoutError extends Error {
  constructor() {
    super('timed out');
    this.name = 'PostTimeoutError';
  }
}

/**
 * POSTs a body to a merchant URL and answers its HTTP status; redirects are not followed. The host is
 * judged by `policy` on the address the connection actually uses, so the guard holds at delivery time
 * whatever DNS answered when the URL was accepted.
 */
export function postToMerchant(
  target: string,
  options: { headers: Record<string, string>; body: string; timeoutMs: number; policy: UrlPolicy },
): Promise<number> {
  const url = new URL(target);
  if (!literalHostAllowed(url, options.policy)) return Promise.reject(new PrivateAddressError(url.hostname));
  const transport = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
  if (!transport) return Promise.reject(new Error(`unsupported protocol ${url.protocol}`));
  return new Promise((resolve, reject) => {
    const request = transport.request(url, {
      method: 'POST',
      headers: { ...options.headers, 'content-length': String(Buffer.byteLength(options.body)) },
      lookup: guardedLookup(options.policy),
      agent: false,
      timeout: options.timeoutMs,
    });
    const deadline = setTimeout(() => request.destroy(new PostTimeoutError()), options.timeoutMs);
    request.on('timeout', () => request.destroy(new PostTimeoutError()));
    request.on('response', (response) => {
      clearTimeout(deadline);
      response.resume();
      response.on('error', () => undefined);
      resolve(response.statusCode ?? 0);
      request.destroy();
    });
    request.on('error', (error) => {
      clearTimeout(deadline);
      reject(error);
    });
    request.end(options.body);
  });
}
