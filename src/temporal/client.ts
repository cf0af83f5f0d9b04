import {
  Client,
  Connection,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
} from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { Config } from '../config';
import { AesGcmPayloadCodec, parsePayloadKeys } from '../ciphers/payload-codec';
import { firstAnswerUpdate, type FirstAnswer } from './contracts';

export function payloadCodec(config: Pick<Config, 'PAYLOAD_KEYS'>): AesGcmPayloadCodec {
  return new AesGcmPayloadCodec(parsePayloadKeys(config.PAYLOAD_KEYS));
}

export async function createTemporalClient(config: Config): Promise<Client> {
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  return new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    dataConverter: { payloadCodecs: [payloadCodec(config)] },
  });
}

export type FirstAnswerOutcome =
  { kind: 'answered'; answer: FirstAnswer } | { kind: 'timeout' } | { kind: 'closed' };

/**
 * Starts the transaction's workflow (or joins it, when it already runs) and waits at most `timeoutMs` for
 * its first answer. A timeout is not an error: the workflow goes on and the status endpoint tells the rest.
 */
export async function startWithFirstAnswer(
  client: Client,
  options: {
    workflowType: string;
    workflowId: string;
    taskQueue: string;
    args: unknown[];
    searchAttributes: SearchAttributePair[];
    timeoutMs: number;
    onLateError: (error: unknown) => void;
  },
): Promise<FirstAnswerOutcome> {
  const startWorkflowOperation = new WithStartWorkflowOperation(options.workflowType, {
    workflowId: options.workflowId,
    taskQueue: options.taskQueue,
    args: options.args,
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: options.searchAttributes,
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
