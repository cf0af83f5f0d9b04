import type { Db } from '../../src/db/client';
import { opsRetried } from '../../src/transactions/ops-audit';
import { NotProcessedError, OutcomeUnknownError } from './errors';
import { sandboxRecords, type SandboxRecord } from './sandbox-records';
import type { AuthorizeRequest, AuthorizeResult, CardAcquirer } from './types';

/** Approved, its answer lost, and still "in progress" when asked, until ops retry it (a rehearsal). */
const UNKNOWN_UNTIL_OPS_RETRY = '4000000000000887';
/** References of authorizations that stay in progress until ops retry them. */
const heldForOps = (reference: string) => reference.startsWith('sbxu_');

const asResult = (record: SandboxRecord): AuthorizeResult =>
  record.state === 'declined'
    ? { outcome: 'declined', message: record.message ?? 'Card declined.' }
    : { outcome: record.state as 'approved' | 'challenge', reference: record.reference };

/**
 * Sandbox acquirer following the sandbox card table (src/sandbox.ts). It keeps its own books by idempotency key,
 * so a retried call answers the same way and never authorizes twice, and a lost answer can be looked up.
 */
export function sandboxAcquirer(db: Db): CardAcquirer {
  const books = sandboxRecords(db, 'sandbox-acquirer', 'authorization');
  const refunds = sandboxRecords(db, 'sandbox-acquirer', 'refund');

  function decide(request: AuthorizeRequest): SandboxRecord | 'outage' {
    const reference = `sbx_${request.transactionId}`;
    const answer = (state: string, message: string | null = null) => ({ state, reference, message });
    switch (request.pan) {
      case '4111111111111111':
      case '5555555555554444':
        return answer('challenge');
      case '4242424242424242':
      case '4000000000000770':
        return answer('approved');
      case UNKNOWN_UNTIL_OPS_RETRY:
        return { state: 'approved', reference: `sbxu_${request.transactionId}`, message: null };
      case '4000000000000002':
        return answer('declined', 'Card declined.');
      case '4000000000009995':
        return answer('declined', 'Insufficient funds.');
      case '4000000000000119':
        return request.terminalRank === 0 ? 'outage' : answer('approved');
      default:
        return request.mode === 'test'
          ? answer('declined', 'The Card is not supported for testing.')
          : answer('approved');
    }
  }

  return {
    async authorize(request) {
      // A request that reaches the acquirer after its deadline is refused unprocessed.
      if (request.signal.aborted || Date.now() > request.deadline.getTime())
        throw new NotProcessedError('sandbox acquirer: the request arrived after its deadline');
      const decided = decide(request);
      if (decided === 'outage') throw new NotProcessedError('sandbox acquirer: simulated processor outage');
      const recorded = await books.record(request.idempotencyKey, {
        ...decided,
        amountMinor: request.amountMinor,
        currency: request.currency,
      });
      if (request.pan === '4000000000000770' || request.pan === UNKNOWN_UNTIL_OPS_RETRY)
        throw new OutcomeUnknownError('sandbox acquirer: the answer was lost');
      return asResult(recorded);
    },

    async completeChallenge(request) {
      const settled = await books.settle(
        request.authorizationKey,
        'challenge',
        request.decision === 'approve'
          ? { state: 'approved', message: null }
          : { state: 'declined', message: '3DS authentication failed.' },
      );
      if (!settled) throw new NotProcessedError('sandbox acquirer: no such authorization');
      return asResult(settled);
    },

    async lookup(request) {
      const record = await books.find(request.authorizationKey);
      if (!record) return { outcome: 'not_found' };
      const transactionId = request.authorizationKey.split(':')[0]!;
      if (heldForOps(record.reference) && !(await opsRetried(db, transactionId)))
        return { outcome: 'pending' };
      return asResult(record);
    },

    // An unfinished challenge is closed as declined; one already answered keeps its answer.
    async cancel(request) {
      const settled = await books.settle(request.authorizationKey, 'challenge', {
        state: 'declined',
        message: 'The 3-D Secure challenge was not completed.',
      });
      if (!settled) throw new NotProcessedError('sandbox acquirer: no such authorization');
      return asResult(settled);
    },

    // Only an approved authorization can be refunded; the refund's own entry makes a repeat answer the same.
    async refund(request) {
      const authorization = await books.find(request.authorizationKey);
      if (authorization?.state !== 'approved') {
        return { outcome: 'refused', message: 'This transaction cannot be refunded.' };
      }
      // A refund is of the whole payment.
      const recorded = await refunds.record(request.refundKey, {
        state: 'refunded',
        reference: `sbx_refund_${authorization.reference}`,
        message: null,
        amountMinor: authorization.amountMinor ?? null,
        currency: authorization.currency ?? null,
      });
      return { outcome: 'refunded', reference: recorded.reference };
    },
  };
}
