import { log, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import { store } from './activities';
import { shielded } from './transaction';
import type { UpdateDefinition } from '@temporalio/common';
import { NOT_AN_OPS_ACTION, type UpdateProof } from '../src/contracts';
import { verifyUpdateProof } from '../src/lib/update-proof';
import { refusal } from './failures';

const SERVICE_KEY_CONFIRMED = 'service-update-key-confirmed';

/**
 * Checks the proofs of a workflow's internal updates (src/contracts, `INTERNAL_UPDATES`) against the
 * update key it was started with. A proof counts once: one copied from the history is refused.
 */
export class UpdateProofs {
  private readonly spent = new Set<string>();
  private trust: Promise<boolean> | undefined;

  /** `key`: the workflow input's `updateKey`; absent in workflows started before proofs. */
  constructor(private readonly key: string | undefined) {}

  /**
   * Whether the key this workflow was started with is the service's own, asked of the worker once, when
   * the first internal update arrives: a workflow started from outside the service carries a key its
   * starter holds, and takes no internal update at all. Histories from before replay without the question.
   */
  trusted(): Promise<boolean> {
    const key = this.key;
    if (key === undefined) return Promise.resolve(true);
    this.trust ??= patched(SERVICE_KEY_CONFIRMED)
      ? store.isServiceUpdateKey({ updateKey: key })
      : Promise.resolve(true);
    return this.trust;
  }

  /** For a validator: refuses an update the service did not prove, before it is accepted. */
  check(update: string, arg: unknown, proof: UpdateProof | undefined): void {
    if (this.key === undefined) return;
    const proven =
      proof !== undefined &&
      !this.spent.has(proof.nonce) &&
      verifyUpdateProof(this.key, workflowInfo().workflowId, update, arg, proof);
    if (!proven) {
      log.warn('internal update refused: it carries no proof from the service', { update });
      throw refusal(NOT_AN_OPS_ACTION);
    }
  }

  /** For the handler: the proof is used up. */
  spend(proof: UpdateProof | undefined): void {
    if (proof) this.spent.add(proof.nonce);
  }
}

/**
 * Registers the handler of an internal update: its validator first checks the proof, its description
 * tells ops in the Temporal UI that it is not theirs to send.
 */
export function setInternalHandler<Result, Arg>(
  proofs: UpdateProofs,
  update: UpdateDefinition<Result, [Arg, UpdateProof?]>,
  handler: (arg: Arg) => Promise<Result>,
  options: { description: string; validator?: (arg: Arg) => void },
): void {
  setHandler(
    update,
    // Shielded as a whole: a cancellation of the workflow is a stop request, never a torn-off update.
    shielded(async (arg: Arg, proof?: UpdateProof) => {
      proofs.spend(proof);
      if (!(await proofs.trusted())) {
        log.warn('internal update refused: the workflow was not started by the service', {
          update: update.name,
        });
        throw refusal(NOT_AN_OPS_ACTION);
      }
      return handler(arg);
    }),
    {
      description: `Internal, not an ops action (refused without the service's proof): ${options.description}`,
      validator: (arg: Arg, proof?: UpdateProof) => {
        proofs.check(update.name, arg, proof);
        options.validator?.(arg);
      },
    },
  );
}
