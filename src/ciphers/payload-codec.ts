import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';

const { temporal } = proto;

export const ENCODING = 'binary/encrypted';
const METADATA_ENCODING = 'encoding';
const METADATA_KEY_ID = 'encryption-key-id';

export interface CodecKey {
  id: string;
  key: Buffer;
}

/** Parses `id:64hex[,id:64hex...]`; the first key encrypts, every key decrypts. */
export function parsePayloadKeys(spec: string): CodecKey[] {
  return spec.split(',').map((entry) => {
    const [id, hex] = entry.split(':');
    if (!id || !hex || !/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error('payload key must be id:64hex');
    return { id, key: Buffer.from(hex, 'hex') };
  });
}

/**
 * Encrypts every Temporal payload with AES-256-GCM, so history holds no customer data in clear. The key id
 * travels in the payload metadata, so keys can be rotated while old histories stay readable.
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly keys: Map<string, Buffer>;
  private readonly current: CodecKey;

  constructor(keys: CodecKey[]) {
    if (keys.length === 0) throw new Error('at least one payload key is needed');
    this.current = keys[0]!;
    this.keys = new Map(keys.map((k) => [k.id, k.key]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => ({
      metadata: {
        [METADATA_ENCODING]: new TextEncoder().encode(ENCODING),
        [METADATA_KEY_ID]: new TextEncoder().encode(this.current.id),
      },
      data: seal(temporal.api.common.v1.Payload.encode(payload).finish(), this.current.key),
    }));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.[METADATA_ENCODING];
      if (!encoding || new TextDecoder().decode(encoding) !== ENCODING) return payload;
      const keyId = payload.metadata?.[METADATA_KEY_ID];
      const key = keyId ? this.keys.get(new TextDecoder().decode(keyId)) : undefined;
      if (!key) throw new Error('payload encrypted with an unknown key id');
      if (!payload.data) throw new Error('encrypted payload has no data');
      return temporal.api.common.v1.Payload.decode(open(payload.data, key));
    });
  }
}

const IV_LENGTH = 12;
const TAG_LENGTH = 16;

export function seal(plain: Uint8Array, key: Buffer): Uint8Array {
  const iv = randomBytes(IV_LENGTH);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

export function open(sealed: Uint8Array, key: Buffer): Uint8Array {
  const buffer = Buffer.from(sealed);
  if (buffer.length < IV_LENGTH + TAG_LENGTH) throw new Error('sealed data is too short');
  const iv = buffer.subarray(0, IV_LENGTH);
  const tag = buffer.subarray(buffer.length - TAG_LENGTH);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([
    decipher.update(buffer.subarray(IV_LENGTH, buffer.length - TAG_LENGTH)),
    decipher.final(),
  ]);
}
