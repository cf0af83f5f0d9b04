import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Payload } from '@temporalio/common';
import type { Config } from '../../platform/config';
import { ApiError } from '../../platform/errors';
import { payloadCodec } from '../../temporal/client';

/**
 * Temporal's JSON for a list of payloads. An empty list comes as `{}` (proto JSON leaves empty fields out,
 * as the Temporal CLI's `workflow show` sends it for an event with no payloads).
 */
const Body = z.object({
  payloads: z
    .array(z.object({ metadata: z.record(z.string(), z.string()).optional(), data: z.string().optional() }))
    .default([]),
});

const toPayload = (p: z.infer<typeof Body>['payloads'][number]): Payload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
  ),
  data: p.data === undefined ? undefined : Buffer.from(p.data, 'base64'),
});

const fromPayload = (p: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [
      k,
      Buffer.from(v ?? new Uint8Array()).toString('base64'),
    ]),
  ),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/**
 * Temporal's remote codec protocol, so ops can read encrypted payloads in the Temporal UI. It needs the
 * CODEC_TOKEN bearer; `npm run dev` also lets the local UI in from loopback (CODEC_ALLOW_LOOPBACK).
 */
export async function codecRoutes(app: FastifyInstance, config: Config): Promise<void> {
  const codec = payloadCodec(config);
  const origins = new Set(config.CODEC_CORS_ORIGINS.split(',').map((o) => o.trim()));

  const cors = (request: FastifyRequest, reply: FastifyReply) => {
    const origin = request.headers.origin;
    if (origin && origins.has(origin)) {
      void reply
        .header('access-control-allow-origin', origin)
        .header('access-control-allow-credentials', 'true')
        .header('access-control-allow-headers', 'authorization, content-type, x-namespace')
        .header('access-control-allow-methods', 'POST, OPTIONS')
        .header('vary', 'origin');
    }
  };

  const authorize = (request: FastifyRequest) => {
    const header = request.headers.authorization ?? '';
    const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    if (token && config.CODEC_TOKEN) {
      const a = Buffer.from(token);
      const b = Buffer.from(config.CODEC_TOKEN);
      if (a.length === b.length && timingSafeEqual(a, b)) return;
      throw new ApiError('AUTH_INVALID');
    }
    const origin = request.headers.origin;
    if (config.CODEC_ALLOW_LOOPBACK && LOOPBACK.has(request.ip) && (!origin || origins.has(origin))) return;
    throw new ApiError(token ? 'AUTH_INVALID' : 'AUTH_MISSING');
  };

  const unlisted = "the Temporal UI's payload codec, for ops with CODEC_TOKEN (docs/operations.md)";
  for (const action of ['encode', 'decode'] as const) {
    app.options(`/codec/${action}`, async (request, reply) => {
      cors(request, reply);
      return reply.status(204).send();
    });
    // The UI calls these for every payload it shows: request lines only at warn, so a page view is not
    // dozens of log lines.
    app.post(`/codec/${action}`, { logLevel: 'warn', config: { unlisted } }, async (request, reply) => {
      cors(request, reply);
      authorize(request);
      const parsed = Body.safeParse(request.body);
      if (!parsed.success) throw new ApiError('VALIDATION', 'The payloads field must be a list of payloads.');
      const payloads = parsed.data.payloads.map(toPayload);
      try {
        const result = action === 'encode' ? await codec.encode(payloads) : await codec.decode(payloads);
        return { payloads: result.map(fromPayload) };
      } catch {
        throw new ApiError('VALIDATION', 'The payloads could not be decoded.');
      }
    });
  }
}
