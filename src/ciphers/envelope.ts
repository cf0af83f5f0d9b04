import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * The request envelope of the interface (section 4.1): `<iv hex>:<ciphertext hex>`, AES-256-CBC with PKCS#7
 * padding, keyed with the UTF-8 bytes of the merchant's 32-character encryption key.
 */
export function encryptEnvelope(plaintext: string, key: string, iv: Buffer = randomBytes(16)): string {
  const cipher = createCipheriv('aes-256-cbc', keyBytes(key), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${iv.toString('hex')}:${ciphertext.toString('hex')}`;
}

const HEX = /^(?:[0-9a-fA-F]{2})+$/;

/** Decrypts an envelope to its UTF-8 text, or returns undefined whatever step fails. */
export function decryptEnvelope(payload: string, key: string): string | undefined {
  const parts = payload.split(':');
  if (parts.length !== 2) return undefined;
  const [ivHex, dataHex] = parts as [string, string];
  if (!HEX.test(ivHex) || !HEX.test(dataHex)) return undefined;
  const iv = Buffer.from(ivHex, 'hex');
  const data = Buffer.from(dataHex, 'hex');
  if (iv.length !== 16 || data.length === 0 || data.length % 16 !== 0) return undefined;
  const bytes = keyBytes(key);
  if (bytes.length !== 32) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-cbc', bytes, iv);
    const plain = Buffer.concat([decipher.update(data), decipher.final()]);
    return new TextDecoder('utf-8', { fatal: true }).decode(plain);
  } catch {
    return undefined;
  }
}

function keyBytes(key: string): Buffer {
  return Buffer.from(key, 'utf8');
}
