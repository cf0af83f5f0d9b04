import {
  CancellationScope,
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  CANCELLED_BY_OPS,
  firstAnswerUpdate,
  hostedDecisionUpdate,
  isFinal,
  searchAttributes,
  stateQuery,
  type HostedDecision,
  workflowIds,
  type FirstAnswer,
  type TransactionKind,
  type TransactionStatus,
} from '../src/temporal/contracts';
import { records, store } from './activities';
import { webhookDelivery } from './webhook-delivery';

export interface Placement {
  terminalId?: string;
  descriptor?: string | null;
  redirectUrl?: string | null;
  details?: Record<string, unknown>;
  refunded?: boolean;
}

/** How a wait for the customer ended. */
export type Answer = HostedDecision | 'timeout' | 'stopped';

const OUTCOME_UNKNOWN = 'The outcome is being confirmed with the processor.';

/**
 * An update handler that a workflow cancellation does not break off: cancellation is a stop request the
 * workflow handles (see `runTransaction`), and the caller still gets its answer.
 */
export function shielded<Args extends unknown[], Result>(
  handler: (...args: Args) => Promise<Result>,
): (...args: Args) => Promise<Result> {
  return (...args) => CancellationScope.nonCancellable(() => handler(...args));
}

/**
 * Runs a transaction workflow's body. Workflow cancellation (the Temporal UI's "Request Cancellation")
 * does not tear the body down mid-step: it becomes a stop request the body honours at its next wait or
 * step boundary, failing the transaction with every compensation, as a failure would.
 */
export async function runTransaction(
  machine: TransactionStateMachine,
  body: () => Promise<void>,
): Promise<FirstAnswer> {
  CancellationScope.current().cancelRequested.catch(() => machine.requestStop(CANCELLED_BY_OPS));
  return CancellationScope.nonCancellable(async () => {
    await body();
    return machine.finish();
  });
}

/**
 * A transaction's public status inside its workflow. Every move is projected to Postgres (with a growing
 * version), mirrored in the search attributes, and a move into a final status starts its webhook.
 */
export class TransactionStateMachine {
  /** The state as projected: what may be told. */
  private state: FirstAnswer = { status: 'PENDING', message: 'Transaction is being processed.' };
  /** The state the latest move is heading for, ahead of its projection. */
  private target: FirstAnswer = this.state;
  private first: FirstAnswer | undefined;
  /** Projection version: the history length of the workflow task that wrote, then a count within it. */
  private versionBase = 0;
  private versionStep = 0;
  /** Projection writes, one after another, so versions land in the order the state changed. */
  private writes: Promise<void> = Promise.resolve();

  private decision: HostedDecision | undefined;
  private awaitingDecision = false;
  private stop: string | undefined;

  /** Registers what every transaction workflow answers: its first answer, its state, hosted-page decisions. */
  constructor(
    private readonly transactionId: string,
    private readonly kind: TransactionKind,
  ) {
    setHandler(
      firstAnswerUpdate,
      shielded(() => this.firstAnswer()),
    );
    setHandler(stateQuery, () => this.current());
    setHandler(
      hostedDecisionUpdate,
      shielded(async (answer: HostedDecision) => {
        this.decision = answer;
        return this.finalAnswer();
      }),
      {
        validator: (_answer: HostedDecision) => {
          if (!this.awaitingDecision || this.decision !== undefined) {
            throw new Error('This transaction awaits no answer.');
          }
        },
      },
    );
  }

  /** Asks the workflow to fail the transaction (with its compensations) at its next wait or step. */
  requestStop(reason: string): void {
    this.stop ??= reason;
  }

  /** Why the transaction was asked to stop, if it was. */
  get stopReason(): string | undefined {
    return this.stop;
  }

  /** Waits for the customer's answer on the hosted page, the time to run out, or a stop request. */
  async awaitDecision(timeoutMs: number): Promise<Answer> {
    this.awaitingDecision = true;
    await condition(() => this.decision !== undefined || this.stop !== undefined, timeoutMs);
    this.awaitingDecision = false;
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
    return this.state;
  }

  current(): FirstAnswer {
    return this.state;
  }

  /** Whether the transaction is final or moving there. */
  isFinal(): boolean {
    return isFinal(this.target.status);
  }

  /** Resolves with the first status the workflow settled on. */
  async firstAnswer(): Promise<FirstAnswer> {
    await condition(() => this.first !== undefined);
    return this.first!;
  }

  /** Resolves once a final status is projected. */
  async finalAnswer(): Promise<FirstAnswer> {
    await condition(() => isFinal(this.state.status));
    return this.state;
  }

  /** Moves to a new status: projected (and only then told), mirrored in search attributes, webhook sent. */
  async move(status: TransactionStatus, message: string, placement: Placement = {}): Promise<void> {
    if (this.isFinal()) throw new Error(`transaction ${this.transactionId} is final already`);
    const next = { status, message };
    this.target = next;
    await this.persist(next, placement);
    upsertSearchAttributes([{ key: searchAttributes.status, value: status }]);
    this.first ??= next;
    if (isFinal(status)) await this.notify(`status:${status}`);
  }

  /** Projects new details without a status change (progress such as crypto received so far). */
  async record(placement: Placement): Promise<void> {
    await this.persist(undefined, placement);
  }

  /**
   * Queues one projection write; each takes the next version when its turn comes, so a detail recorded
   * while a move is being written can never land with a higher version and an older status.
   */
  private persist(next: FirstAnswer | undefined, placement: Placement): Promise<void> {
    const write = this.writes.then(async () => {
      const state = next ?? this.state;
      await store.project({
        transactionId: this.transactionId,
        version: this.nextVersion(),
        ...state,
        ...placement,
      });
      this.state = state;
    });
    this.writes = write.catch(() => undefined);
    return write;
  }

  /**
   * Versions grow with the workflow's history: a workflow task the server refused (an update arrived while
   * it ran) may have written projections already; its retry sees a longer history, so every write of the
   * retry supersedes them, whichever path it takes.
   */
  private nextVersion(): number {
    const { historyLength } = workflowInfo();
    if (historyLength !== this.versionBase) {
      this.versionBase = historyLength;
      this.versionStep = 0;
    }
    this.versionStep += 1;
    return this.versionBase * 1000 + this.versionStep;
  }

  private async notify(eventKey: string): Promise<void> {
    const event = await records.recordWebhookEvent({ transactionId: this.transactionId, eventKey });
    if (!event) return;
    await startChild(webhookDelivery, {
      workflowId: workflowIds.webhook(event.eventId, 0),
      args: [
        {
          eventId: event.eventId,
          run: 0,
          delaysSeconds: event.delaysSeconds,
          windowSeconds: event.windowSeconds,
        },
      ],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  }
}
