import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, validationError } from '../../platform/errors';
import { decryptEnvelope } from '../../ciphers/envelope';
import { isPlainObject, parseJsonExact } from '../../lib/json';
import { TtlCache } from '../../lib/ttl-cache';

/**
 * Replaces `{"payload": "<iv>:<ciphertext>"}` with the JSON object it decrypts to, so the route's schema
 * validates the merchant's fields. Every way of failing to decrypt gets the same 400.
 */
export function decryptBody(options: { keysOf: (merchantId: string) => Promise<string[]> }) {
  const cache = new TtlCache<string, string[]>(5_000, 10_000);
  return async function decryptBodyHook(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const body = request.body;
    const payload = isPlainObject(body) ? body.payload : undefined;
    if (typeof payload !== 'string' || payload.length === 0) {
      throw validationError({
        payload: [
          payload === undefined || payload === ''
            ? 'The payload field is required.'
            : 'The payload field must be a string.',
        ],
      });
    }
    const merchantId = request.merchant.merchantId;
    const cached = cache.get(merchantId);
    const keys = cached ?? (await options.keysOf(merchantId));
    if (!cached) cache.set(merchantId, keys);
    let opened = openWith(payload, keys);
    // The keys were read a moment ago: a key issued since (a rotation) is read before the envelope is refused.
    if (!opened && cached) {
      const fresh = await options.keysOf(merchantId);
      cache.set(merchantId, fresh);
      opened = openWith(
        payload,
        fresh.filter((key) => !cached.includes(key)),
      );
    }
    if (!opened) throw new ApiError('ENVELOPE_INVALID');
    request.body = opened;
  };
}

/** The JSON object an envelope decrypts to with one of `keys`, or undefined. */
function openWith(payload: string, keys: readonly string[]): Record<string, unknown> | undefined {
  for (const key of keys) {
    const text = decryptEnvelope(payload, key);
    if (text === undefined) continue;
    let parsed: unknown;
    try {
      parsed = parseJsonExact(text);
    } catch {
      continue;
    }
    if (isPlainObject(parsed)) return parsed;
  }
  return undefined;
}

/**
 * For endpoints the vendor SDK calls in plain JSON (`?Skip-Encryption=true`) that also take the envelope:
 * a body that is exactly `{"payload": "…"}` is decrypted, any other body is the merchant's fields as sent.
 */
export function decryptBodyIfEnveloped(decrypt: ReturnType<typeof decryptBody>) {
  return async function decryptIfEnvelopedHook(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const body = request.body;
    if (isPlainObject(body) && Object.keys(body).length === 1 && typeof body.payload === 'string')
      await decrypt(request, reply);
  };
}
