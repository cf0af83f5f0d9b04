import type { z } from 'zod';
import type { TransactionKind } from '../../lib/vocabulary';
import type { ErrorCode } from '../errors';

/**
 * The shape of an endpoint's declaration. The API installs its hooks from it (src/api/app.ts), the
 * reference, the metrics and the typed client (src/client) read it.
 */

/** How the reference documents an endpoint beyond its schemas. */
export interface Reference {
  /**
   * How the body comes: the encrypted envelope only, plain JSON only, or either. The API installs the
   * envelope's decryption from this (src/api/app.ts).
   */
  body?: 'encrypted' | 'plain' | 'either';
  /** What the success answer is (its schema: `schema.response`; Prometheus text has none). */
  answer: { description: string };
  /** Errors beyond those every operation of its shape can give. */
  refusals?: ErrorCode[];
  /** Messages other than the catalogue's, where the route words one its own way. */
  customMessages?: Partial<Record<ErrorCode, string>>;
  /** Taken without a key (every other endpoint gets the key check from this). */
  open?: boolean;
  /** Served in test mode only: documented under `test` instead of `{mode}`, 404 in live mode. */
  testOnly?: boolean;
}

export interface Endpoint {
  method: 'GET' | 'POST';
  /** Fastify's form: `:name` for a parameter. */
  url: string;
  schema: {
    operationId: string;
    tags: readonly string[];
    summary: string;
    description: string;
    params?: z.ZodType;
    querystring?: z.ZodType;
    body?: z.ZodType;
    /** The success answer (./answers.ts), written by the exact-JSON serializer. */
    response?: { 200: z.ZodType; 503?: z.ZodType };
  };
  config: { reference: Reference; creates?: TransactionKind };
}

/** A card or crypto payment link's reference: the same answer. */
export const linkAnswer = {
  body: 'either',
  answer: { description: 'The link.' },
  refusals: ['ORDER_CONFLICT'],
} satisfies Reference;

export const endpoint = <const E extends Endpoint>(declared: E): E => declared;

/** A sandbox table as Markdown, for an operation's description. */
export const markdownTable = (rows: [string, string][]) =>
  [
    '| Card | Outcome |',
    '| --- | --- |',
    ...rows.map(([cards, outcome]) => `| ${cards} | ${outcome} |`),
  ].join('\n');
