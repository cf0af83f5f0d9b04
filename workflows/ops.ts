import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ParentClosePolicy,
  currentUpdateInfo,
  deprecatePatch,
  condition,
  setHandler,
  startChild,
} from '@temporalio/workflow';
import {
  alreadyFinal,
  forceFailUpdate,
  redeliverWebhooksUpdate,
  retryNowUpdate,
  workflowIds,
  actorOf,
  type FirstAnswer,
  type OpsAction,
  type StopRequest,
  type TransactionState,
} from '../src/contracts';
import { records } from './activities';
import { shielded } from './transaction';
import { RETRY_AUDITED_FIRST, type Waiting } from './waiting';
import { webhookDelivery } from './webhook-delivery';
import { refusal } from './failures';

/**
 * A retry's audit row ends with the status its attempt came to. Deprecated: histories from before it (which
 * kept the status before) can no longer be open (docs/architecture.md, retiring a patch).
 */
const RETRY_OUTCOME_AUDITED = 'retry-outcome-audited';

/**
 * What the ops handlers use of a transaction's state machine (`TransactionStateMachine` in ./state, which
 * installs them): named here so this module needs nothing of the machine's.
 */
export interface OpsMachine {
  readonly transactionId: string;
  readonly waiting: Waiting;
  readonly unknownOutcome: boolean;
  current(): FirstAnswer;
  state(): TransactionState;
  isFinal(): boolean;
  requestStop(request: StopRequest): void;
  finalAnswer(): Promise<FirstAnswer>;
}

/**
 * The ops actions every transaction workflow takes, as updates (the CLI's `ops` commands, or the Temporal
 * UI's update dialog), each validated and audited in Postgres: `retryNow` cuts a backoff short,
 * `forceFail` fails the transaction with the same compensations as a normal failure, `redeliverWebhooks`
 * sends its webhook events again. Anything but a redelivery is refused on a final transaction.
 */
export function installOpsHandlers(machine: OpsMachine): void {
  const refuseIfFinal = () => {
    if (machine.isFinal()) throw refusal(alreadyFinal(machine.current().status));
  };
  /** An action's row on the trail, by the update that asked for it. */
  const auditKey = (action: string) => `${action}:${currentUpdateInfo()?.id ?? action}`;
  const audit = async (action: string, input: OpsAction | undefined, statusBefore: string) =>
    records.recordOpsAction({
      transactionId: machine.transactionId,
      key: auditKey(action),
      actor: actorOf(input),
      action,
      reason: input?.reason ?? null,
      statusBefore,
      statusAfter: machine.current().status,
    });

  setHandler(
    retryNowUpdate,
    shielded(async (input: OpsAction | undefined) => {
      const before = machine.current().status;
      const mark = machine.waiting.restMark;
      // On the trail before the retry acts, so what the retry does can rely on it being recorded.
      deprecatePatch(RETRY_AUDITED_FIRST);
      await audit('retryNow', input, before);
      machine.waiting.cutBackoff();
      // The trail's "after" is what the attempt came to (paid, failed, another backoff), and so is the answer.
      deprecatePatch(RETRY_OUTCOME_AUDITED);
      // Every move to a final status comes to rest too, once projected.
      await condition(() => machine.waiting.restedSince(mark));
      await records.recordOpsOutcome({
        transactionId: machine.transactionId,
        key: auditKey('retryNow'),
        statusAfter: machine.current().status,
      });
      return machine.state();
    }),
    {
      description:
        'Ops: cut the current backoff short and ask the connector again now. Data: {"actor": "you"}',
      validator: (_input: OpsAction | undefined) => {
        refuseIfFinal();
        const { waitingFor, detail } = machine.waiting.state;
        if (waitingFor !== 'retry') throw refusal(`Nothing to retry now: ${detail}`);
      },
    },
  );

  setHandler(
    forceFailUpdate,
    shielded(async (input: OpsAction) => {
      const key = `forceFail:${currentUpdateInfo()?.id ?? 'forceFail'}`;
      machine.requestStop({ reason: input.reason!.trim(), actor: actorOf(input), action: 'forceFail', key });
      return machine.finalAnswer();
    }),
    {
      description:
        'Ops: fail the transaction with its compensations and webhook. Data: {"reason": "why", "actor": "you"}',
      validator: (input: OpsAction) => {
        refuseIfFinal();
        const reason = input?.reason?.trim() ?? '';
        if (reason.length === 0 || reason.length > 500)
          throw refusal('A reason of 1 to 500 characters is required.');
        if (machine.unknownOutcome) {
          throw refusal(
            "A connector's answer to an earlier call is being asked for: the transaction can be failed once it is known.",
          );
        }
      },
    },
  );

  setHandler(
    redeliverWebhooksUpdate,
    shielded(async (input: OpsAction | undefined) => {
      const runs = await records.prepareWebhookRedelivery({
        transactionId: machine.transactionId,
        actor: actorOf(input),
      });
      // With no event to send, the request is still on the trail (a redelivery audits the runs it starts).
      if (runs.length === 0) {
        await audit('redeliverWebhooks', input, machine.current().status);
      }
      for (const run of runs) {
        try {
          await startChild(webhookDelivery, {
            workflowId: workflowIds.webhook(run.eventId, run.run),
            args: [run],
            parentClosePolicy: ParentClosePolicy.ABANDON,
          });
        } catch (error) {
          // A redelivery through the API or the CLI started this run a moment ago: it is under way.
          if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
        }
      }
      return runs.map((run) => ({ event_id: run.eventId, run: run.run }));
    }),
    { description: 'Ops: send every webhook event of the transaction again. Data: {"actor": "you"}' },
  );
}
