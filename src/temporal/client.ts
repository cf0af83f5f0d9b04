import { fromRoot } from '../platform/root';
import {
  Client,
  Connection,
  type WorkflowClientInterceptor,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import {
  ApplicationFailure,
  type DataConverter,
  type SearchAttributePair,
  type UpdateDefinition,
} from '@temporalio/common';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client/index.js';
import type { Config } from '../platform/config';
import { AesGcmPayloadCodec, parsePayloadKeys } from '../ciphers/payload-codec';
import { updateProver, type UpdateProver } from '../ciphers/update-proof';
import {
  INTERNAL_UPDATES,
  WORKFLOW_TASK_TIMEOUT_MS,
  failureTypes,
  firstAnswerUpdate,
  workflowIds,
  type FirstAnswer,
  type TransactionWorkflow,
  type WebhookDeliveryInput,
  type WorkflowInput,
  type WorkflowSignatures,
} from '../contracts';

export function payloadCodec(config: Pick<Config, 'PAYLOAD_KEYS'>): AesGcmPayloadCodec {
  return new AesGcmPayloadCodec(parsePayloadKeys(config.PAYLOAD_KEYS));
}

/** Failures without stacks, their messages encoded (src/temporal/failure-converter.cjs). */
export const failureConverterPath = fromRoot('src', 'temporal', 'failure-converter.cjs');

/** What every client and worker of the service converts payloads and failures with. */
export function dataConverter(config: Pick<Config, 'PAYLOAD_KEYS'>): DataConverter {
  return { payloadCodecs: [payloadCodec(config)], failureConverterPath };
}

/**
 * Adds the service's proof to every internal update the client sends (src/contracts, `INTERNAL_UPDATES`),
 * so the workflow knows it comes from the service and not from someone with the Temporal UI. A proof is
 * for one run, so an internal update names the run it is for (`sendInternalUpdate` finds it); one that does
 * not, or that would start its workflow (whose run is not known yet), is refused here.
 */
export function proveInternalUpdates(prover: UpdateProver): WorkflowClientInterceptor {
  const internal = new Set<string>(INTERNAL_UPDATES);
  return {
    startUpdate: (input, next) => {
      if (!internal.has(input.updateName) || input.args.length !== 1) return next(input);
      // A handle a start returned names its first run: the update goes to that run exactly.
      const { workflowId } = input.workflowExecution;
      const runId = input.workflowExecution.runId || input.firstExecutionRunId;
      if (!runId) throw new Error(`internal update ${input.updateName} sent without the run it is for`);
      const proof = prover.prove({ workflowId, runId }, input.updateName, input.args[0]);
      return next({ ...input, workflowExecution: { workflowId, runId }, args: [input.args[0], proof] });
    },
    startUpdateWithStart: (input, next) => {
      if (internal.has(input.updateName))
        throw new Error(`internal update ${input.updateName} cannot start its workflow`);
      return next(input);
    },
  };
}

/** The options of the service's own clients: its data converter and the proof of its internal updates. */
export function serviceClientOptions(
  config: Pick<Config, 'PAYLOAD_KEYS' | 'MASTER_KEY'> & { TRACING?: boolean },
): { dataConverter: DataConverter; interceptors: { workflow: WorkflowClientInterceptor[] } } {
  return {
    dataConverter: dataConverter(config),
    interceptors: {
      workflow: [
        proveInternalUpdates(updateProver(config.MASTER_KEY)),
        // With tracing on, starts and updates carry the caller's trace context to the workflow in its headers.
        ...(config.TRACING ? [new OpenTelemetryWorkflowClientInterceptor()] : []),
      ],
    },
  };
}

export async function createTemporalClient(
  config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE' | 'PAYLOAD_KEYS' | 'MASTER_KEY'> & {
    TRACING?: boolean;
  },
): Promise<Client> {
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  return new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, ...serviceClientOptions(config) });
}

export type FirstAnswerOutcome =
  { kind: 'answered'; answer: FirstAnswer } | { kind: 'timeout' } | { kind: 'closed' };

/**
 * Starts a transaction's workflow (or joins it, when it already runs) and waits at most `timeoutMs` for
 * its first answer. A timeout is not an error: the workflow goes on and the status endpoint tells the rest.
 */
export async function startWithFirstAnswer<Name extends TransactionWorkflow>(
  client: Client,
  options: {
    workflow: Name;
    input: WorkflowInput<Name> & { transactionId: string };
    taskQueue: string;
    searchAttributes: SearchAttributePair[];
    /** What the Temporal UI shows of the workflow (no personal data). */
    staticSummary?: string;
    staticDetails?: string;
    timeoutMs: number;
    onLateError: (error: unknown) => void;
  },
): Promise<FirstAnswerOutcome> {
  const startWorkflowOperation = new WithStartWorkflowOperation<WorkflowSignatures[Name]>(options.workflow, {
    workflowId: workflowIds.transaction(options.input.transactionId),
    taskQueue: options.taskQueue,
    args: [options.input] as Parameters<WorkflowSignatures[Name]>,
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    // What a payout's send inside its task is timed against (SEND_NOTED_WITHIN_MS).
    workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
    typedSearchAttributes: options.searchAttributes,
    ...(options.staticSummary ? { staticSummary: options.staticSummary } : {}),
    ...(options.staticDetails ? { staticDetails: options.staticDetails } : {}),
  });
  const update = client.workflow
    .executeUpdateWithStart(firstAnswerUpdate, { startWorkflowOperation })
    .then((answer): FirstAnswerOutcome => ({ kind: 'answered', answer }));
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<FirstAnswerOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timeout' }), options.timeoutMs);
  });
  try {
    const outcome = await Promise.race([update, deadline]);
    if (outcome.kind === 'timeout') update.catch(options.onLateError);
    return outcome;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return { kind: 'closed' };
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Events a redelivery workflow takes at most: larger redeliveries are split. */
const REDELIVERY_BATCH = 100;

/**
 * Starts delivery runs of webhook events, in batches whose first attempts go together
 * (`webhookRedelivery`). A batch is named by every run it holds: the same redelivery asked for twice
 * before the first one's attempts are recorded gets the same run numbers, and the second finds that batch
 * already under way, which is what it asked for, so it is not an error; a redelivery of other events
 * (or more of them) is another batch.
 */
export async function startWebhookRedeliveries(
  client: Client,
  taskQueue: string,
  runs: WebhookDeliveryInput[],
): Promise<void> {
  for (let i = 0; i < runs.length; i += REDELIVERY_BATCH) {
    const batch = runs.slice(i, i + REDELIVERY_BATCH);
    try {
      await client.workflow.start<WorkflowSignatures['webhookRedelivery']>('webhookRedelivery', {
        workflowId: workflowIds.webhookRedelivery(batch),
        taskQueue,
        args: [{ runs: batch }],
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
}

export type UpdateOutcome<Result> =
  | { kind: 'done'; result: Result }
  /** The workflow's validator refused it, for this reason: it runs, but takes no such update now. */
  | { kind: 'refused'; message: string }
  /** The workflow has closed (or never started). */
  | { kind: 'closed' };

/**
 * Whether an update's failure is the workflow saying no before it took the update: its validator's
 * refusal, or no handler of that name. A failure of an update it took (a fault in its handler) is not.
 */
function refusedBeforeTaken(error: WorkflowUpdateFailedError): boolean {
  const cause = error.cause;
  if (cause instanceof ApplicationFailure && cause.type === failureTypes.refused) return true;
  return /no registered handler for update/i.test(cause?.message ?? '');
}

/** The workflow's latest run, when it is running. */
async function runningRun(client: Client, workflowId: string): Promise<string | undefined> {
  return client.workflow
    .getHandle(workflowId)
    .describe()
    .then(
      (description) => (description.status.name === 'RUNNING' ? description.runId : undefined),
      (cause: unknown) => {
        if (cause instanceof WorkflowNotFoundError) return undefined;
        throw cause;
      },
    );
}

/**
 * Sends an update to a workflow's running run and waits for its result. An internal update's proof is for
 * that run: `runId` names it when the caller knows it (a transaction row's `run_id`), else the latest run is
 * asked for; when the named run has closed meanwhile (ops Reset it), the run that took over gets it.
 */
export async function sendInternalUpdate<Result, Args extends [unknown, ...unknown[]]>(
  client: Client,
  workflowId: string,
  update: UpdateDefinition<Result, Args>,
  arg: Args[0],
  runId?: string | null,
): Promise<UpdateOutcome<Result>> {
  let target = runId ?? (await runningRun(client, workflowId));
  for (let tries = 0; target !== undefined; tries++) {
    try {
      const handle = client.workflow.getHandle(workflowId, target);
      return { kind: 'done', result: await handle.executeUpdate(update, { args: [arg] as unknown as Args }) };
    } catch (error) {
      if (!(error instanceof WorkflowUpdateFailedError || error instanceof WorkflowNotFoundError))
        throw error;
      const running = await runningRun(client, workflowId);
      if (running === undefined) return { kind: 'closed' };
      // A handler that failed after the workflow took the update is a fault to retry, not a refusal.
      if (error instanceof WorkflowUpdateFailedError && refusedBeforeTaken(error))
        return { kind: 'refused', message: error.cause?.message ?? error.message };
      if (running === target || tries > 0) throw error;
      target = running;
    }
  }
  return { kind: 'closed' };
}

/** Sends an update to a transaction's running workflow and waits for its result. */
export async function sendUpdate<Result, Args extends [unknown, ...unknown[]]>(
  client: Client,
  transactionId: string,
  update: UpdateDefinition<Result, Args>,
  arg: Args[0],
  runId?: string | null,
): Promise<UpdateOutcome<Result>> {
  return sendInternalUpdate(client, workflowIds.transaction(transactionId), update, arg, runId);
}
