import { ed25519 } from '@noble/curves/ed25519.js';

/**
 * What proves that an internal workflow update (a customer's decision, a deposit, a refund...) comes from
 * the part of the service that saw it: an Ed25519 signature, by the service's update key, over the
 * workflow id, the run it is for, the update's name, its argument and a nonce. Good for that run only: a
 * proof copied from any history is refused by every other run, a Reset's new run among them. Pure, so
 * workflows verify it in their validators (docs/operations.md, which updates ops may send).
 */
export interface UpdateProof {
  /** Random, once per update: a proof copied from a run's own history is refused the second time. */
  nonce: string;
  /** Hex Ed25519 signature over `proofMessage`. */
  signature: string;
}

/** Which run of which workflow an internal update is for. */
export interface UpdateTarget {
  workflowId: string;
  runId: string;
}

/** The bytes an update proof signs. The argument is written as canonical JSON (sorted keys). */
export function proofMessage(target: UpdateTarget, update: string, arg: unknown, nonce: string): Uint8Array {
  return new TextEncoder().encode(
    `payments/update-proof/v2\n${target.workflowId}\n${target.runId}\n${update}\n${nonce}\n${canonicalJson(arg)}`,
  );
}

/** Whether `proof` is the update key's signature of this update, for this run. Never throws. */
export function verifyUpdateProof(
  publicKeyHex: string,
  target: UpdateTarget,
  update: string,
  arg: unknown,
  proof: UpdateProof | undefined,
): boolean {
  if (
    typeof proof?.nonce !== 'string' ||
    typeof proof.signature !== 'string' ||
    !/^[0-9a-f]{128}$/.test(proof.signature)
  )
    return false;
  try {
    return ed25519.verify(
      hexBytes(proof.signature),
      proofMessage(target, update, arg, proof.nonce),
      hexBytes(publicKeyHex),
    );
  } catch {
    return false;
  }
}

/** JSON with object keys sorted and undefined members left out, as both sides of a proof write it. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const members = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`);
  return `{${members.join(',')}}`;
}

function hexBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
