import {
  allHandlersFinished,
  condition,
  deprecatePatch,
  log,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { UpdateProofs, setInternalHandler } from './proofs';
import {
  firstAnswerUpdate,
  expireWaitUpdate,
  hostedDecisionUpdate,
  isFinal,
  searchAttributes,
  stateQuery,
  type FirstAnswer,
  type HostedDecision,
  type TransactionKind,
  type TransactionState,
  type TransactionStatus,
  type StopRequest,
  type Mode,
  type TransactionRef,
} from '../src/contracts';
import { Projection, type Placement } from './projection';
import type { FirstStepRequest } from '../activities/index';
import { shielded } from './transaction';
import { Waiting } from './waiting';
import { sendWebhookEvent } from './webhook-delivery';
import { installOpsHandlers } from './ops';
import { refusal } from './failures';

/** How a wait for the customer ended. */
export type Answer = HostedDecision | 'timeout' | 'stopped';

const OUTCOME_UNKNOWN = 'The outcome is being confirmed with the processor.';

/**
 * A customer's answer on a hosted page is answered once handled, not once final. Deprecated: histories
 * from before it can no longer be open (docs/architecture.md, retiring a patch).
 */
const DECISION_ANSWERED_WHEN_HANDLED = 'decision-answered-when-handled';

/**
 * A transaction's public status inside its workflow. Every move is projected to Postgres (with a growing
 * version), mirrored in the search attributes, and a move into a final status starts its webhook. It
 * also keeps what the workflow waits on (`waiting`) and takes ops actions (workflows/ops.ts).
 */
export class TransactionStateMachine {
  readonly transactionId: string;
  readonly mode: Mode;
  /** False when the transaction has no webhook URL (undefined in workflows started before it was said). */
  private readonly notifies: boolean | undefined;
  /** Checks the proofs of the internal updates this transaction takes. */
  readonly proofs: UpdateProofs;
  readonly waiting = new Waiting(() => this.stop !== undefined);
  /** A connector call's outcome is unknown and being asked for: nothing may be compensated meanwhile. */
  unknownOutcome = false;
  /**
   * Set by a workflow whose vaulted card must go when the transaction ends: the final move's projection
   * removes it in the same local activity (`cardPurged` once that is written).
   */
  purgeCardWhenFinal = false;
  /** Set by a workflow whose vaulted card must go now: the next move's projection removes it. */
  purgeCardWithNextMove = false;
  private readonly projection: Projection;
  /** The state the latest move is heading for, ahead of its projection. */
  private target: FirstAnswer = { status: 'PENDING', message: 'Transaction is being processed.' };
  private first: FirstAnswer | undefined;
  private decision: HostedDecision | undefined;
  private awaitingDecision = false;
  /** Set by a test-mode request to end the wait on the customer now (`expireWaitUpdate`). */
  private customerTimeUp = false;
  private stop: StopRequest | undefined;
  private stopAudited = false;
  /** Moves projected so far: what `nextSnapshot` waits on. */
  private moves = 0;
  /** Waits for a hosted-page answer begun so far. */
  private waits = 0;

  /**
   * Registers what every transaction workflow answers: its first answer, its state, hosted-page decisions.
   * `fetch`: what the run's first step fetches as it binds the run (`proofs.firstStep`).
   */
  constructor(
    input: TransactionRef,
    readonly kind: TransactionKind,
    fetch?: FirstStepRequest,
  ) {
    this.transactionId = input.transactionId;
    this.mode = input.mode;
    this.notifies = input.notifies;
    this.proofs = new UpdateProofs(input, fetch);
    this.projection = new Projection(this.transactionId);
    setHandler(
      firstAnswerUpdate,
      shielded(() => this.firstAnswer()),
      { description: 'Internal: the API waits on it for the answer to the create request.' },
    );
    setHandler(stateQuery, () => this.state(), {
      description: 'Where the transaction stands and what it waits on.',
    });
    setInternalHandler(
      this.proofs,
      hostedDecisionUpdate,
      async (answer: HostedDecision) => {
        this.decision = answer;
        const waits = this.waits;
        // Answered once handled: final, or waiting again (a return from the acquirer's page that found the
        // challenge still open), so such returns never pile up in flight.
        deprecatePatch(DECISION_ANSWERED_WHEN_HANDLED);
        await condition(() => isFinal(this.projection.state.status) || this.waits > waits);
        return this.projection.state;
      },
      {
        description: "the customer's approve or decline on a hosted page.",
        validator: () => {
          if (!this.awaitingDecision || this.decision !== undefined) {
            throw refusal('This transaction awaits no answer.');
          }
        },
      },
    );
    setInternalHandler(
      this.proofs,
      expireWaitUpdate,
      async () => {
        this.customerTimeUp = true;
        return 'expired' as const;
      },
      {
        description: 'test mode: ends the wait on the customer now, as if its time had run out.',
        validator: () => {
          if (this.mode !== 'test') throw refusal('Ending a wait early is for test mode only.');
          if (this.waiting.state.waitingFor !== 'customer' || isFinal(this.target.status))
            throw refusal('This transaction waits on no customer.');
        },
      },
    );
    installOpsHandlers(this);
  }

  /** Whether a test-mode request ended the wait on the customer (a wait that ends on it consumes it). */
  get customerTimeIsUp(): boolean {
    return this.customerTimeUp;
  }

  /** Asks the workflow to fail the transaction (with its compensations) at its next wait or step. */
  requestStop(request: StopRequest): void {
    this.stop ??= request;
  }

  /** Why the transaction was asked to stop, if it was. */
  get stopReason(): string | undefined {
    return this.stop?.reason;
  }

  /**
   * Waits for the customer's answer on the hosted page, the time to run out, or a stop request. Each wait
   * takes a new answer (a return from an acquirer's page that found the challenge still open is followed by
   * another wait).
   */
  async awaitDecision(timeoutMs: number, waitingFor: string): Promise<Answer> {
    this.waits += 1;
    this.decision = undefined;
    this.awaitingDecision = true;
    this.waiting.on('customer', waitingFor, Date.now() + timeoutMs);
    await condition(
      () => this.decision !== undefined || this.stop !== undefined || this.customerTimeUp,
      timeoutMs,
      { summary: waitingFor },
    );
    this.awaitingDecision = false;
    this.customerTimeUp = false;
    if (this.decision !== undefined) return this.decision;
    return this.stop !== undefined ? 'stopped' : 'timeout';
  }

  /** Shows the transaction as waiting on the processor's answer to a call whose answer was lost. */
  async outcomeUnknown(): Promise<void> {
    if (this.target.status === 'PENDING' && this.target.message === OUTCOME_UNKNOWN) return;
    await this.move('PENDING', OUTCOME_UNKNOWN, { redirectUrl: null });
  }

  /** Lets running update handlers finish, then gives the workflow's result. */
  async finish(): Promise<FirstAnswer> {
    await condition(allHandlersFinished);
    return this.projection.state;
  }

  /**
   * Ends on the final state another run of this transaction wrote (the one a Reset replaced): nothing is
   * moved, projected or notified again.
   */
  adopt(state: FirstAnswer): void {
    this.target = state;
    this.projection.adopt(state);
    this.first ??= state;
    this.waiting.on('nothing', `${state.status}: ${state.message} (as the run a Reset replaced left it)`);
  }

  /** The state as projected. */
  current(): FirstAnswer {
    return this.projection.state;
  }

  /** The projected state, where the workflow waits, and any pending stop. */
  state(): TransactionState {
    return {
      ...this.projection.state,
      ...this.waiting.state,
      ...(this.stop ? { stopRequested: this.stop.reason } : {}),
    };
  }

  /** Whether the final move's projection has removed the vaulted card (`purgeCardWhenFinal`). */
  get cardPurged(): boolean {
    return this.purgeCardWhenFinal && isFinal(this.projection.state.status);
  }

  /** Whether the transaction is final or moving there. */
  isFinal(): boolean {
    return isFinal(this.target.status);
  }

  /** Resolves with the first status the workflow settled on, once projected. */
  async firstAnswer(): Promise<FirstAnswer> {
    await condition(() => this.first !== undefined);
    return this.first!;
  }

  /** Resolves with the next move's projected state (a hosted step's answer: what the customer sees next). */
  async nextMove(): Promise<FirstAnswer> {
    const seen = this.moves;
    await condition(() => this.moves > seen);
    return this.projection.state;
  }

  /** Resolves once a final status is projected. */
  async finalAnswer(): Promise<FirstAnswer> {
    await condition(() => isFinal(this.projection.state.status));
    return this.projection.state;
  }

  /**
   * Moves to a new status: projected (and only then told), mirrored in search attributes, webhook sent.
   * The move that ends a transaction an ops stop was requested on records the action with it.
   */
  async move(status: TransactionStatus, message: string, placement: Placement = {}): Promise<void> {
    if (this.isFinal()) throw new Error(`transaction ${this.transactionId} is final already`);
    const next = { status, message };
    const audit =
      isFinal(status) && this.stop && !this.stopAudited
        ? { ...this.stop, statusBefore: this.target.status }
        : undefined;
    this.target = next;
    if (audit) this.stopAudited = true;
    const purgeCard = (this.purgeCardWhenFinal && isFinal(status)) || this.purgeCardWithNextMove;
    this.purgeCardWithNextMove = false;
    await this.projection.write(next, {
      ...placement,
      ...(audit ? { audit } : {}),
      ...(purgeCard ? { purgeCard } : {}),
    });
    upsertSearchAttributes([{ key: searchAttributes.status, value: status }]);
    this.moves += 1;
    this.first ??= this.projection.state;
    if (isFinal(status)) {
      // An outcome, not a fault: a decline is told at info like a success (the SDK skips it on replay).
      log.info(`transaction ${status}: ${message}`, { transactionId: this.transactionId, status });
      this.waiting.on('nothing', `${status}: ${message}`);
      await this.notify(`status:${status}`);
    }
  }

  /** Projects new details without a status change (progress such as crypto received so far). */
  async record(placement: Placement): Promise<void> {
    await this.projection.write(undefined, placement);
  }

  private async notify(eventKey: string): Promise<void> {
    if (this.notifies === false) return;
    await sendWebhookEvent(this.transactionId, eventKey);
  }
}
