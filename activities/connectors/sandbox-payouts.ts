import type { Db } from '../../src/db/client';
import { opsRetried } from '../../src/transactions/ops-audit';
import { NotProcessedError, OutcomeUnknownError } from './errors';
import { sandboxRecords, type SandboxRecord } from './sandbox-records';
import type { PayoutProcessor, PayoutRequest, PayoutResult } from './types';

const LOST_SEND = '4000000000003261';
/** Every send refused as an outage until ops retry the payout (a rehearsal). */
const DOWN_UNTIL_OPS_RETRY = '4000000000003287';
const LOST_CONFIRM = '4000000000003279';

const asResult = (record: SandboxRecord): PayoutResult =>
  record.state === 'declined'
    ? { outcome: 'declined', message: record.message ?? 'Payout declined by the card issuer.' }
    : { outcome: record.state as 'paid' | 'verification', reference: record.reference };

/**
 * Sandbox payout processor following the sandbox payout card table (src/sandbox.ts). It keeps its own books by
 * idempotency key, so a retried send pays once and a lost answer can be looked up.
 */
export function sandboxPayouts(db: Db): PayoutProcessor {
  const books = sandboxRecords(db, 'sandbox-payouts', 'payout');
  // The books hold no card number: a payout whose confirmation answers get lost is told by its reference.
  const confirmationLost = (reference: string) => reference.startsWith('sbxpl_');

  function decide(request: PayoutRequest): SandboxRecord {
    const reference = `sbxp_${request.transactionId}`;
    const answer = (state: string, message: string | null = null) => ({ state, reference, message });
    switch (request.pan) {
      case '4222222222222222':
      case '5111222233334444':
      case LOST_SEND:
      case DOWN_UNTIL_OPS_RETRY:
        return answer('paid');
      case '4333333333333333':
      case '5222333344445555':
        return answer('declined', 'Payout declined by the card issuer.');
      case '4000000000003220':
        return answer('verification');
      case LOST_CONFIRM:
        return { state: 'verification', reference: `sbxpl_${request.transactionId}`, message: null };
      default:
        return request.mode === 'test'
          ? answer('declined', 'The Card is not supported for testing.')
          : answer('paid');
    }
  }

  return {
    async send(request) {
      // A request that reaches the processor after its deadline is refused unprocessed.
      if (request.signal.aborted || Date.now() > request.deadline.getTime())
        throw new NotProcessedError('sandbox payouts: the request arrived after its deadline');
      if (request.pan === DOWN_UNTIL_OPS_RETRY && !(await opsRetried(db, request.transactionId)))
        throw new NotProcessedError('sandbox payouts: processor outage (until ops retry the payout)');
      const recorded = await books.record(request.idempotencyKey, {
        ...decide(request),
        amountMinor: request.amountMinor,
        currency: request.currency,
      });
      if (request.pan === LOST_SEND) throw new OutcomeUnknownError('sandbox payouts: the answer was lost');
      return asResult(recorded);
    },

    async confirm(request) {
      const settled = await books.settle(
        request.payoutKey,
        'verification',
        request.decision === 'approve'
          ? { state: 'paid', message: null }
          : { state: 'declined', message: 'Payout rejected at verification.' },
      );
      if (!settled) throw new NotProcessedError('sandbox payouts: no such payout');
      if (confirmationLost(settled.reference))
        throw new OutcomeUnknownError('sandbox payouts: the answer was lost');
      return asResult(settled);
    },

    async lookup(request) {
      const record = await books.find(request.payoutKey);
      return record ? asResult(record) : { outcome: 'not_found' };
    },
  };
}
