import type { Db } from '../../src/db/client';
import { NotProcessedError, OutcomeUnknownError } from '../../activities/connectors/errors';
import { sandboxAcquirer } from '../../activities/connectors/sandbox-acquirer';
import type { CardAcquirer } from '../../activities/connectors/types';
import { sandboxPayouts } from '../../activities/connectors/sandbox-payouts';
import type { PayoutProcessor } from '../../activities/connectors/types';
import type { PayoutStep } from '../../activities/payouts';

/**
 * What happens to one connector call: it goes through (`ok`); the connector refuses it without acting
 * (`refuse`); or the connector acts and the answer is lost on the way back (`lose`).
 */
export type Fault = 'ok' | 'refuse' | 'lose';

export interface FaultPlan {
  /** Per operation, the fate of each call in turn; calls past the list go through. */
  authorize?: Fault[];
  completeChallenge?: Fault[];
  send?: Fault[];
  confirm?: Fault[];
  /** How many lookups answer `pending` before the connector says what it knows. */
  pendingLookups?: number;
  /**
   * The worker is lost between the steps of a payout's combined step: each entry ends the next attempt
   * that reaches that point (after the reserve, the send, or the settle), with what it did so far kept.
   */
  crashAfter?: PayoutStep[];
}

/**
 * The sandbox connectors with faults injected per transaction, as the plan for that transaction says.
 * The connector's own books stay true: a lost answer is lost after the sandbox recorded what it did.
 */
export function faultyConnectors(db: Db, plans: Map<string, FaultPlan>) {
  const acquirer = sandboxAcquirer(db);
  const payouts = sandboxPayouts(db);
  const transactionOf = (key: string) => key.split(':')[0]!;

  async function run<T>(transactionId: string, operation: keyof FaultPlan, call: () => Promise<T>) {
    const plan = plans.get(transactionId);
    const faults = plan?.[operation];
    const fault = Array.isArray(faults) ? (faults.shift() ?? 'ok') : 'ok';
    if (fault === 'refuse') throw new NotProcessedError(`injected: ${operation} refused`);
    if (fault === 'lose') {
      await call().catch(() => undefined);
      throw new OutcomeUnknownError(`injected: ${operation} answer lost`);
    }
    return call();
  }

  async function lookup<T>(
    transactionId: string,
    call: () => Promise<T>,
  ): Promise<T | { outcome: 'pending' }> {
    const plan = plans.get(transactionId);
    if (plan?.pendingLookups) {
      plan.pendingLookups -= 1;
      return { outcome: 'pending' };
    }
    return call();
  }

  const card: CardAcquirer = {
    authorize: (request) => run(request.transactionId, 'authorize', () => acquirer.authorize(request)),
    completeChallenge: (request) =>
      run(transactionOf(request.authorizationKey), 'completeChallenge', () =>
        acquirer.completeChallenge(request),
      ),
    lookup: (request) => lookup(transactionOf(request.authorizationKey), () => acquirer.lookup(request)),
    refund: (request) => acquirer.refund(request),
    cancel: (request) => acquirer.cancel(request),
  };
  const payout: PayoutProcessor = {
    send: (request) => run(request.transactionId, 'send', () => payouts.send(request)),
    confirm: (request) => run(transactionOf(request.payoutKey), 'confirm', () => payouts.confirm(request)),
    lookup: (request) => lookup(transactionOf(request.payoutKey), () => payouts.lookup(request)),
  };
  /** Cuts a payout's combined step short where the plan says (`ActivityDeps.afterPayoutStep`). */
  const afterPayoutStep = (step: PayoutStep, transactionId: string) => {
    const crashes = plans.get(transactionId)?.crashAfter;
    const at = crashes?.indexOf(step) ?? -1;
    if (at < 0) return;
    crashes!.splice(at, 1);
    throw new Error(`injected: worker lost after the payout step ${step}`);
  };
  return { card, payout, afterPayoutStep };
}
