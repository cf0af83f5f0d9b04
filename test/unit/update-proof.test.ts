import { describe, expect, it } from 'vitest';
import { updateProver } from '../../src/ciphers/update-proof';
import { canonicalJson, verifyUpdateProof, type UpdateProof } from '../../src/lib/update-proof';

const service = updateProver('11'.repeat(32));
const other = updateProver('22'.repeat(32));
const arg = { txHash: '0xabc', units: '10000000', sender: 'customer' };
const run = { workflowId: 'PAtransaction', runId: 'run-1' };
const proof = service.prove(run, 'deposit', arg);

describe('update proofs', () => {
  it("verify what the service's key signed, for that run, update and argument", () => {
    expect(verifyUpdateProof(service.publicKey, run, 'deposit', arg, proof)).toBe(true);
    // Key order is not part of the argument: the other side reads it back from JSON.
    const reordered = { units: '10000000', sender: 'customer', txHash: '0xabc' };
    expect(verifyUpdateProof(service.publicKey, run, 'deposit', reordered, proof)).toBe(true);
  });

  it.each<[string, Parameters<typeof verifyUpdateProof>]>([
    ['another key', [other.publicKey, run, 'deposit', arg, proof]],
    ['another workflow', [service.publicKey, { ...run, workflowId: 'PAother' }, 'deposit', arg, proof]],
    [
      'another run of the same workflow (a Reset, a second start)',
      [service.publicKey, { ...run, runId: 'run-2' }, 'deposit', arg, proof],
    ],
    ['another update', [service.publicKey, run, 'hostedDecision', arg, proof]],
    ['another amount', [service.publicKey, run, 'deposit', { ...arg, units: '1' }, proof]],
    ['a member added', [service.publicKey, run, 'deposit', { ...arg, extra: 1 }, proof]],
    ['another nonce', [service.publicKey, run, 'deposit', arg, { ...proof, nonce: 'x' }]],
    ['a flipped signature bit', [service.publicKey, run, 'deposit', arg, flipped(proof)]],
    ['a short signature', [service.publicKey, run, 'deposit', arg, { ...proof, signature: 'ab' }]],
    ['no proof', [service.publicKey, run, 'deposit', arg, undefined]],
    ['a proof of the wrong shape', [service.publicKey, run, 'deposit', arg, {} as UpdateProof]],
    ['a malformed key', [service.publicKey.slice(2), run, 'deposit', arg, proof]],
  ])('refuse %s', (_case, args) => {
    expect(verifyUpdateProof(...args)).toBe(false);
  });

  it('sign each update with a new nonce, and derive one key per master key', () => {
    expect(service.prove(run, 'deposit', arg).nonce).not.toBe(proof.nonce);
    expect(updateProver('11'.repeat(32)).publicKey).toBe(service.publicKey);
    expect(service.publicKey).toMatch(/^[0-9a-f]{64}$/);
    expect(other.publicKey).not.toBe(service.publicKey);
  });

  it('write arguments as canonical JSON', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 'x', c: null }], u: undefined })).toBe(
      '{"a":[{"c":null,"d":"x"}],"b":1}',
    );
    expect(canonicalJson('approve')).toBe('"approve"');
  });
});

function flipped(proof: UpdateProof): UpdateProof {
  const last = parseInt(proof.signature.slice(-1), 16) ^ 1;
  return { ...proof, signature: proof.signature.slice(0, -1) + last.toString(16) };
}
