import { createPrivateKey, createPublicKey, hkdfSync, randomBytes, sign } from 'node:crypto';
import { proofMessage, type UpdateProof, type UpdateTarget } from '../lib/update-proof';

/** PKCS#8 DER of an Ed25519 private key, before its 32-byte seed. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** Signs internal workflow updates for the service's processes (src/lib/update-proof.ts). */
export interface UpdateProver {
  /** Hex Ed25519 public key: workflows are started with it and check proofs against it. */
  readonly publicKey: string;
  /** A proof for one run of one workflow. */
  prove(target: UpdateTarget, update: string, arg: unknown): UpdateProof;
}

/**
 * The update key, derived from the master key (HKDF-SHA256), so every process that holds the master key
 * (API, worker, CLI) proves its updates with the same key and nothing new has to be configured.
 */
export function updateProver(masterKeyHex: string): UpdateProver {
  const seed = Buffer.from(
    hkdfSync('sha256', Buffer.from(masterKeyHex, 'hex'), Buffer.alloc(0), 'payments update proof v1', 32),
  );
  const privateKey = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = createPublicKey(privateKey)
    .export({ format: 'der', type: 'spki' })
    .subarray(-32)
    .toString('hex');
  return {
    publicKey,
    prove(target, update, arg) {
      const nonce = randomBytes(12).toString('hex');
      const signature = sign(null, proofMessage(target, update, arg, nonce), privateKey).toString('hex');
      return { nonce, signature };
    },
  };
}

const provers = new Map<string, UpdateProver>();

/** The update key's public half for this master key: what workflows are started with. */
export function updateKeyOf(masterKeyHex: string): string {
  let prover = provers.get(masterKeyHex);
  if (!prover) {
    prover = updateProver(masterKeyHex);
    provers.set(masterKeyHex, prover);
  }
  return prover.publicKey;
}
