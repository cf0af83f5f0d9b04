import type { Client } from '@temporalio/client';
import type proto from '@temporalio/proto';
import type { Config } from '../../src/platform/config';
import { payloadCodec } from '../../src/temporal/client';
import { firstAnswerUpdate } from '../../src/contracts';

/**
 * What an operator can copy from a workflow's history with the Temporal UI and the codec endpoint, and
 * what they might change in it before starting the workflow again by hand (docs/operations.md, what binds
 * a run).
 */
export interface CopiedRun {
  /** The workflow type. */
  type: string;
  /** The input the run was started with. */
  input: Record<string, unknown>;
  /** The internal updates the run accepted, each with the arguments (and proof) it carried. */
  updates: { name: string; args: [unknown, ...unknown[]] }[];
}

export async function copyRun(
  client: Client,
  config: Pick<Config, 'PAYLOAD_KEYS'>,
  workflowId: string,
  runId?: string,
): Promise<CopiedRun> {
  const codec = payloadCodec(config);
  const decode = async (payloads: proto.temporal.api.common.v1.IPayload[] | null | undefined) =>
    (await codec.decode(payloads ?? [])).map(
      (p) => JSON.parse(Buffer.from(p.data!).toString('utf8')) as unknown,
    );
  const events = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
  const started = events[0]!.workflowExecutionStartedEventAttributes!;
  const [input] = (await decode(started.input?.payloads)) as Record<string, unknown>[];
  const updates: CopiedRun['updates'] = [];
  for (const event of events) {
    const request = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
    if (request?.name && request.name !== firstAnswerUpdate.name)
      updates.push({
        name: request.name,
        args: (await decode(request.args?.payloads)) as [unknown, ...unknown[]],
      });
  }
  return { type: started.workflowType!.name!, input: input!, updates };
}

/** The input an operator would type: the amounts raised, the money sent to a wallet and address of theirs. */
export function changedInput(input: Record<string, unknown>, walletId: string): Record<string, unknown> {
  const changed: Record<string, unknown> = { ...input };
  if (typeof input.amountMinor === 'string') changed.amountMinor = String(BigInt(input.amountMinor) * 1000n);
  if (typeof input.walletId === 'string') changed.walletId = walletId;
  if (typeof input.walletAddress === 'string') changed.walletAddress = 'TForgerForgerForgerForgerForger';
  if (typeof input.crypto === 'object' && input.crypto !== null) {
    const crypto = input.crypto as { fiatMinor: string; expectedUnits: string };
    changed.crypto = { ...crypto, fiatMinor: String(BigInt(crypto.fiatMinor) * 1000n), expectedUnits: '1' };
  }
  return changed;
}
