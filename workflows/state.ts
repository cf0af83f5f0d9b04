import {
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  setHandler,
  startChild,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import {
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
import { store } from './activities';
import { webhookDelivery } from './webhook-delivery';

export interface Placement {
  terminalId?: string;
  descriptor?: string | null;
  redirectUrl?: string | null;
  details?: Record<string, unknown>;
  refunded?: boolean;
}

/**
 * A transaction's public status inside its workflow. Every move is projected to Postgres (with a growing
 * version), mirrored in the search attributes, and a move into a final status starts its webhook.
 */
export class TransactionStateMachine {
  private state: FirstAnswer = { status: 'PENDING', message: 'Transaction is being processed.' };
  private first: FirstAnswer | undefined;
  private version = 0;

  private decision: HostedDecision | undefined;
  private awaitingDecision = false;

  /** Registers what every transaction workflow answers: its first answer, its state, hosted-page decisions. */
  constructor(
    private readonly transactionId: string,
    private readonly kind: TransactionKind,
  ) {
    setHandler(firstAnswerUpdate, () => this.firstAnswer());
    setHandler(stateQuery, () => this.current());
    setHandler(
      hostedDecisionUpdate,
      async (answer) => {
        this.decision = answer;
        return this.finalAnswer();
      },
      {
        validator: (_answer: HostedDecision) => {
          if (!this.awaitingDecision || this.decision !== undefined) {
            throw new Error('This transaction awaits no answer.');
          }
        },
      },
    );
  }

  /** Waits for the customer's answer on the hosted page; undefined when the time runs out. */
  async awaitDecision(timeoutMs: number): Promise<HostedDecision | undefined> {
    this.awaitingDecision = true;
    const answered = await condition(() => this.decision !== undefined, timeoutMs);
    this.awaitingDecision = false;
    return answered ? this.decision : undefined;
  }

  /** Lets running update handlers finish, then gives the workflow's result. */
  async finish(): Promise<FirstAnswer> {
    await condition(allHandlersFinished);
    return this.state;
  }

  current(): FirstAnswer {
    return this.state;
  }

  isFinal(): boolean {
    return isFinal(this.state.status);
  }

  /** Resolves with the first status the workflow settled on. */
  async firstAnswer(): Promise<FirstAnswer> {
    await condition(() => this.first !== undefined);
    return this.first!;
  }

  async finalAnswer(): Promise<FirstAnswer> {
    await condition(() => this.isFinal());
    return this.state;
  }

  async move(status: TransactionStatus, message: string, placement: Placement = {}): Promise<void> {
    if (this.isFinal()) throw new Error(`transaction ${this.transactionId} is final already`);
    this.version += 1;
    await store.project({
      transactionId: this.transactionId,
      version: this.version,
      status,
      message,
      ...placement,
    });
    upsertSearchAttributes([{ key: searchAttributes.status, value: status }]);
    this.state = { status, message };
    this.first ??= this.state;
    if (isFinal(status)) await this.notify(`status:${status}`);
  }

  /** Projects new details without a status change (progress such as crypto received so far). */
  async record(placement: Placement): Promise<void> {
    this.version += 1;
    await store.project({
      transactionId: this.transactionId,
      version: this.version,
      ...this.state,
      ...placement,
    });
  }

  private async notify(eventKey: string): Promise<void> {
    const event = await store.recordWebhookEvent({ transactionId: this.transactionId, eventKey });
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
