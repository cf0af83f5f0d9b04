import { ApplicationFailure, deprecatePatch, log, setHandler, workflowInfo } from '@temporalio/workflow';
import { store } from './activities';
import { shielded } from './transaction';
import type { UpdateDefinition } from '@temporalio/common';
import { NOT_AN_OPS_ACTION, failureTypes, type UpdateProof } from '../src/contracts';
import { verifyUpdateProof } from '../src/lib/update-proof';
import { refusal } from './failures';
import type { FirstStepRequest, FirstStepResult } from '../activities/index';

/**
 * Every run binds itself to the record the service made for it before anything else (`bindRun`): a run
 * the service did not start fails there. Deprecated: histories from before it (which confirmed only the
 * update key, alongside their first steps) can no longer be open (docs/architecture.md, retiring a patch).
 */
const RUN_BOUND = 'run-bound-to-the-service-record';

/** What a service workflow's input says of where it comes from. */
export interface StartedWith {
  updateKey?: string;
  expiresAt?: string;
  ticket?: string;
}

/**
 * Binds a service workflow's run to the record the service made for it (activities/authority.ts), and
 * checks the proofs of its internal updates (src/contracts, `INTERNAL_UPDATES`) against the update key it
 * was started with, for this run. A proof counts once: one copied from the run's own history is refused,
 * and one made for any other run does not verify.
 */
export class UpdateProofs {
  private readonly spent = new Set<string>();
  private readonly key: string | undefined;
  /** Whether the run was confirmed as the service's; undefined until the worker answered. */
  private confirmed: boolean | undefined;
  private readonly confirmation: Promise<boolean>;
  /** Why the run is not the service's, once known. */
  private refused: string | undefined;

  /** What the binding fetched as well, when it was asked to (`firstStep`). */
  private fetched: FirstStepResult | undefined;

  /**
   * `input`: the workflow's input. Construct first thing in the workflow: it records a patch marker.
   * `fetch`: what the binding fetches as well, in the same step (`firstStep`).
   */
  constructor(input: StartedWith, fetch?: FirstStepRequest) {
    this.key = input.updateKey;
    deprecatePatch(RUN_BOUND);
    this.confirmation = store
      .bindRun({
        input,
        firstRunId: workflowInfo().firstExecutionRunId,
        ...fetch,
      })
      .then(({ refused, ...fetched }) => {
        this.refused = refused;
        this.fetched = fetched;
        return (this.confirmed = refused === undefined);
      });
  }

  /**
   * Resolves once the run is bound to its record; fails the workflow (`NotTheServiceRun`, with why) when
   * the service did not start it, so nothing else runs.
   */
  bound(): Promise<void> {
    return this.confirmation.then((confirmed) => {
      if (confirmed) return;
      log.warn('run refused: the service did not start it', { refused: this.refused });
      throw ApplicationFailure.nonRetryable(this.refused!, failureTypes.notTheServiceRun);
    });
  }

  /** For a validator: refuses an update the service did not prove for this run, before it is accepted. */
  check(update: string, arg: unknown, proof: UpdateProof | undefined): void {
    const { workflowId, runId } = workflowInfo();
    const proven =
      this.key !== undefined &&
      this.confirmed !== false &&
      proof !== undefined &&
      !this.spent.has(proof.nonce) &&
      verifyUpdateProof(this.key, { workflowId, runId }, update, arg, proof);
    if (!proven) {
      log.warn('internal update refused: it carries no proof from the service for this run', { update });
      throw refusal(NOT_AN_OPS_ACTION);
    }
  }

  /**
   * What the binding fetched besides (each part undefined when it was not asked for); read once the run is
   * bound.
   */
  get firstStep(): FirstStepResult {
    return this.fetched ?? {};
  }

  /**
   * For the handler: the proof is used up, and the run is known to be the service's (it is asked at start,
   * so only an update in the workflow's very first task may wait for it). Synchronous whenever nothing is
   * left to wait for, so a handler runs as it did before proofs.
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
