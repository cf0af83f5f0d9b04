import { Context, type Info } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { Db } from '../src/db/client';
import { updateKeyOf } from '../src/ciphers/update-proof';
import {
  failureTypes,
  NOT_THE_SERVICE_RUN,
  workflowIds,
  type FirstAnswer,
  type WorkflowName,
} from '../src/contracts';
import { recordOpsAction } from '../src/transactions/ops-audit';
import {
  LEGACY_CHAIN,
  boundRun,
  claimRun,
  moveRun,
  type RunOwner,
  type RunRef,
} from '../src/transactions/runs';

const { WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW } = proto.temporal.api.enums.v1.WorkflowTaskFailedCause;

/** The workflows that act for a record the service made, and what that record is. */
const OWNER_OF: Partial<Record<WorkflowName, (workflowId: string) => RunOwner | undefined>> = {
  cardPayment: (id) => ({ kind: 'transaction', transactionId: id }),
  cardPayout: (id) => ({ kind: 'transaction', transactionId: id }),
  apmPayment: (id) => ({ kind: 'transaction', transactionId: id }),
  cryptoRamp: (id) => ({ kind: 'transaction', transactionId: id }),
  cryptoPayin: (id) => ({ kind: 'transaction', transactionId: id }),
  aftercare: (id) => {
    const transactionId = id.slice(workflowIds.aftercare('').length);
    return workflowIds.aftercare(transactionId) === id ? { kind: 'aftercare', transactionId } : undefined;
  },
  paymentLink: (id) => {
    const linkId = id.slice(workflowIds.paymentLink('').length);
    return workflowIds.paymentLink(linkId) === id ? { kind: 'link', linkId } : undefined;
  },
};

/** What the first step of a service workflow is told about itself. */
export interface BindRunInput {
  /** The workflow's own input, as it was started with. */
  input: { updateKey?: string; expiresAt?: string; ticket?: string };
  /** `workflowInfo().firstExecutionRunId`: the run chain, which a Reset keeps. */
  firstRunId: string;
}

/** The history facts the audit trail names: who started a run, and who Reset it to what. */
interface RunStory {
  chain?: string;
  startedBy?: string;
  reset?: { by: string; reason: string };
}

/**
 * Only the run the service started for a record (a transaction, a payment link, an aftercare request) may
 * act for it, or a Reset of that run by ops; nothing else a Temporal UI or CLI user can start moves money
 * or changes a transaction (docs/operations.md, what binds a run). The first step of each service
 * workflow binds its run chain to the record, with the input the service recorded; every activity that
 * moves money or writes the transaction checks its run against that binding first. A refused run is
 * recorded in the audit trail with whoever started it; a Reset's new run, the first time it acts, with
 * whoever Reset it.
 */
export function runAuthority(db: Db, options: { masterKey: string; temporal?: () => Client | undefined }) {
  const serviceKey = updateKeyOf(options.masterKey);
  /** Runs this worker has checked: a run's chain never changes, so a run once found the service's stays so. */
  const checked = new Set<string>();

  const story = async (workflowId: string, runId: string): Promise<RunStory> => {
    const client = options.temporal?.();
    if (!client) return {};
    const history = await client.workflow
      .getHandle(workflowId, runId)
      .fetchHistory()
      .catch(() => undefined);
    const events = history?.events ?? [];
    const started = events[0]?.workflowExecutionStartedEventAttributes;
    const resets = events
      .map((event) => event.workflowTaskFailedEventAttributes)
      .filter((failed) => failed?.cause === WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW);
    const reset = resets.at(-1);
    return {
      ...(started?.firstExecutionRunId ? { chain: started.firstExecutionRunId } : {}),
      ...(started?.identity ? { startedBy: started.identity } : {}),
      ...(reset ? { reset: resetBy(reset.failure?.message ?? '') } : {}),
    };
  };

  const refuse = async (
    owner: RunOwner | undefined,
    info: Info,
    why: string,
    status: string,
  ): Promise<string> => {
    const { workflowId, runId } = executionOf(info);
    const { startedBy } = await story(workflowId, runId);
    const message = `${NOT_THE_SERVICE_RUN} ${why}`;
    await recordOpsAction(db, {
      transactionId: owner ? auditIdOf(owner) : workflowId,
      key: `refused-run:${runId}`,
      actor: startedBy ?? 'unknown',
      action: 'refusedRun',
      reason: `${message} (workflow ${workflowId}, run ${runId}, ${info.workflowType})`,
      statusBefore: status,
      statusAfter: status,
    });
    return message;
  };

  /** Lets a Reset's new run act for the record its chain is bound to, and records who Reset it. */
  const adoptReset = async (owner: RunOwner, run: RunRef, status: string): Promise<boolean> => {
    if (!(await moveRun(db, owner, run))) return false;
    const { reset } = await story(workflowIdOf(owner), run.runId);
    await recordOpsAction(db, {
      transactionId: auditIdOf(owner),
      key: `reset:${run.runId}`,
      actor: reset?.by ?? 'unknown',
      action: 'reset',
      reason: reset?.reason || null,
      statusBefore: status,
      statusAfter: status,
    });
    return true;
  };

  return {
    activities: {
      /**
       * The first step of every service workflow: binds its run chain to the record the service made for
       * it, when that record exists, no other chain holds it and it was started with the recorded input
       * and the service's update key. A Reset's new run that comes back here is let through (and audited).
       * Answers why not, for the workflow to fail with, after recording the refusal.
       */
      async bindRun(args: BindRunInput): Promise<{ refused?: string }> {
        const info = Context.current().info;
        const execution = executionOf(info);
        const owner = OWNER_OF[info.workflowType as WorkflowName]?.(execution.workflowId);
        const run = { runId: execution.runId, chain: args.firstRunId };
        if (!owner)
          return { refused: await refuse(owner, info, 'It acts for nothing the service made.', 'NONE') };
        if (args.input.updateKey !== serviceKey)
          return {
            refused: await refuse(owner, info, 'It was started without the service’s update key.', 'NONE'),
          };
        const { expiresAt, ticket } = args.input;
        if (await claimRun(db, owner, run, { input: args.input, expiresAt, ticket })) {
          checked.add(runKey(info));
          return {};
        }
        const bound = await boundRun(db, owner, run);
        if (!bound)
          return {
            refused: await refuse(owner, info, 'The service recorded nothing under this id.', 'NONE'),
          };
        if (
          bound.chain === run.chain &&
          (bound.runId === run.runId || (await adoptReset(owner, run, bound.status)))
        ) {
          checked.add(runKey(info));
          return {};
        }
        const why =
          bound.chain === null
            ? 'It was started with another input than the service’s.'
            : bound.chain === LEGACY_CHAIN
              ? 'The transaction was closed before runs were bound.'
              : 'Another run was started by the service for it.';
        return { refused: await refuse(owner, info, why, bound.status) };
      },
    },

    /**
     * Fails the calling activity (non-retryable, `NotTheServiceRun`) unless its run may act for the record
     * its workflow stands for: the bound run, a Reset of its chain, or the running workflow of a record
     * opened before runs were bound (which binds it now).
     */
    async assertServiceRun(): Promise<void> {
      const info = Context.current().info;
      const key = runKey(info);
      if (checked.has(key)) return;
      const { workflowId, runId } = executionOf(info);
      const owner = OWNER_OF[info.workflowType as WorkflowName]?.(workflowId);
      if (!owner)
        throw notTheServiceRun(await refuse(owner, info, 'It acts for nothing the service made.', 'NONE'));
      // The chain is asked of Temporal only when the run is not the bound one (a Reset's, or a forger's).
      let bound = await boundRun(db, owner, { runId, chain: runId });
      if (bound?.runId !== runId) {
        const chain = (await story(workflowId, runId)).chain ?? runId;
        bound = await boundRun(db, owner, { runId, chain });
        const run = { runId, chain };
        // A record opened before runs were bound is bound by its running workflow's first check.
        const ours =
          bound !== undefined &&
          (bound.chain === null
            ? await moveRun(db, owner, run)
            : bound.chain === chain && (await adoptReset(owner, run, bound.status)));
        if (!ours)
          throw notTheServiceRun(
            await refuse(
              owner,
              info,
              'Another run was started by the service for it.',
              bound?.status ?? 'NONE',
            ),
          );
      }
      if (checked.size > 100_000) checked.clear();
      checked.add(key);
    },
  };
}

export type RunAuthority = ReturnType<typeof runAuthority>;

/** The workflow run an activity runs for (every activity here is a workflow's). */
function executionOf(info: Info): { workflowId: string; runId: string } {
  if (!info.workflowExecution) throw new Error('an activity outside a workflow acts for nothing');
  return info.workflowExecution;
}

function runKey(info: Info): string {
  const { workflowId, runId } = executionOf(info);
  return `${workflowId}/${runId}`;
}

function auditIdOf(owner: RunOwner): string {
  return owner.kind === 'link' ? owner.linkId : owner.transactionId;
}

function workflowIdOf(owner: RunOwner): string {
  if (owner.kind === 'transaction') return workflowIds.transaction(owner.transactionId);
  if (owner.kind === 'aftercare') return workflowIds.aftercare(owner.transactionId);
  return workflowIds.paymentLink(owner.linkId);
}

function notTheServiceRun(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, failureTypes.notTheServiceRun);
}

/**
 * A step refused because the transaction is final already, with the state it is final in: the run that
 * asked (a Reset's, which went another way than the run it replaced) ends with that state.
 */
export function finalAlready(final: FirstAnswer): ApplicationFailure {
  return ApplicationFailure.create({
    message: `The transaction is final already (${final.status}): this run ends with it.`,
    type: failureTypes.alreadyFinal,
    nonRetryable: true,
    details: [final],
  });
}

/**
 * Who Reset a run, and why. Temporal records no caller for a Reset (its event names the history service),
 * only the reason ops typed: docs/operations.md asks them to begin it with their name (`alice: why`).
 */
function resetBy(reason: string): { by: string; reason: string } {
  const named = /^\s*([^\s:]{1,64}):\s*(.*)$/s.exec(reason);
  return named ? { by: named[1]!, reason: named[2]! } : { by: 'unknown (Reset)', reason };
}
