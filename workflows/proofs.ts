import { log, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import { store } from './activities';
import { shielded } from './transaction';
import type { UpdateDefinition } from '@temporalio/common';
import { NOT_AN_OPS_ACTION, type UpdateProof } from '../src/contracts';
import { verifyUpdateProof } from '../src/lib/update-proof';
import { refusal } from './failures';

/**
 * Every workflow started from here on requires proofs: one started without an update key (the Temporal UI's
 * "Start Workflow", say) takes no internal update at all. Histories from before (no marker) replay as
 * they ran, taking internal updates without proof.
 */
const UPDATE_PROOFS_REQUIRED = 'update-proofs-required';

/**
 * Checks the proofs of a workflow's internal updates (src/contracts, `INTERNAL_UPDATES`) against the
 * update key it was started with, once the worker has confirmed that key is the service's own (a workflow
 * started from outside the service carries a key of its starter's). A proof counts once: one copied from
 * the history is refused.
 */
export class UpdateProofs {
  private readonly spent = new Set<string>();
  private readonly required: boolean;
  /** Whether the worker confirmed the key; undefined until it answered. */
  private confirmed: boolean | undefined;
  private readonly confirmation: Promise<boolean>;

  /** `key`: the workflow input's `updateKey`. Call first thing in the workflow: it records a patch marker. */
  constructor(private readonly key: string | undefined) {
    this.required = patched(UPDATE_PROOFS_REQUIRED);
    this.confirmation =
      this.required && key !== undefined
        ? store.isServiceUpdateKey({ updateKey: key }).then((confirmed) => (this.confirmed = confirmed))
        : Promise.resolve((this.confirmed = !this.required));
  }

  /** For a validator: refuses an update the service did not prove, before it is accepted. */
  check(update: string, arg: unknown, proof: UpdateProof | undefined): void {
    if (!this.required) return;
    const proven =
      this.key !== undefined &&
      this.confirmed !== false &&
      proof !== undefined &&
      !this.spent.has(proof.nonce) &&
      verifyUpdateProof(this.key, workflowInfo().workflowId, update, arg, proof);
    if (!proven) {
      log.warn('internal update refused: it carries no proof from the service', { update });
      throw refusal(NOT_AN_OPS_ACTION);
    }
  }

  /**
   * For the handler: the proof is used up, and the worker's confirmation of the key is known (it is asked
   * at start, so only an update in the workflow's very first task may wait for it). Synchronous whenever
   * nothing is left to wait for, so a handler runs as it did before proofs.
   */
  admit(update: string, proof: UpdateProof | undefined): void | Promise<void> {
    if (proof) this.spent.add(proof.nonce);
    if (this.confirmed === true) return;
    const refuse = () => {
      log.warn('internal update refused: the workflow was not started by the service', { update });
      throw refusal(NOT_AN_OPS_ACTION);
    };
    if (this.confirmed === false) refuse();
    return this.confirmation.then((confirmed) => {
      if (!confirmed) refuse();
    });
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
      const admitted = proofs.admit(update.name, proof);
      if (admitted) await admitted;
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
