import type { Reference } from '../../schemas/endpoints';
import { ref, type JsonSchema } from './schemas';

/**
 * How the reference shows a body that comes encrypted (docs/api.md, the envelope): its `payload`, and the
 * fields it decrypts to as `contentSchema`, which Swagger UI shows and tools that follow it read.
 */

const ENVELOPE_EXAMPLE =
  '9f1c2b7e4d3a6f5e8c0b1a2d3e4f5a6b:6b1f0c8e2d4a7b9c1e3f5a7b9d0c2e4f8a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d';

export const ENVELOPE_PAYLOAD: JsonSchema = {
  type: 'string',
  description: '`<IV as hex>:<ciphertext as hex>`: the fields, encrypted.',
  pattern: '^[0-9a-fA-F]{32}:([0-9a-fA-F]{32})+$',
  examples: [ENVELOPE_EXAMPLE],
};

/** The envelope whose payload decrypts to `plaintext`'s fields. */
function envelopeOf(plaintext: string): JsonSchema {
  return {
    type: 'object',
    title: 'Encrypted envelope',
    properties: {
      payload: {
        ...ENVELOPE_PAYLOAD,
        description: `The \`${plaintext}\` fields as JSON text, encrypted: \`<IV as hex>:<ciphertext as hex>\`.`,
        contentMediaType: 'application/json',
        contentSchema: ref(plaintext),
      },
    },
    required: ['payload'],
  };
}

export function requestBody(
  form: NonNullable<Reference['body']>,
  name: string,
  example: unknown,
): JsonSchema {
  const plain = { ...ref(name), title: `${name} (plain JSON)` };
  const schema =
    form === 'plain'
      ? ref(name)
      : form === 'encrypted'
        ? envelopeOf(name)
        : { anyOf: [plain, envelopeOf(name)] };
  const how = {
    plain: `Plain JSON: the \`${name}\` fields.`,
    encrypted:
      `The encrypted envelope of the \`${name}\` fields: see them under Schema, \`payload\`, ` +
      'Content schema. Plain bodies are refused.',
    either: `The \`${name}\` fields as plain JSON, or their encrypted envelope.`,
  }[form];
  return {
    required: true,
    description: how,
    // For tools that read the fields of an encrypted body without following `contentSchema`.
    ...(form === 'plain' ? {} : { 'x-plaintext': ref(name) }),
    content: {
      'application/json': {
        schema,
        example: form === 'encrypted' ? { payload: ENVELOPE_EXAMPLE } : example,
      },
    },
  };
}
