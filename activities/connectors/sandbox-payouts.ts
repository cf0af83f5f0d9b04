import type { Mode } from '../../src/crypto/secrets';

/** The connector interface every card payout processor implements. */
export interface PayoutProcessor {
  send(request: PayoutRequest): Promise<PayoutResult>;
  /** Completes a payout held for cardholder verification. */
  confirm(request: { transactionId: string; decision: 'approve' | 'decline' }): Promise<PayoutResult>;
}

export interface PayoutRequest {
  transactionId: string;
  mode: Mode;
  pan: string;
  expiry: string;
  amountMinor: bigint;
  currency: string;
}

export type PayoutResult =
  | { outcome: 'paid'; reference: string }
  | { outcome: 'verification' }
  | { outcome: 'declined'; message: string };

/** The interface's payout test cards that fail the Luhn check; the API accepts them in test mode. */
export const SANDBOX_PAYOUT_CARDS: ReadonlySet<string> = new Set([
  '4222222222222222',
  '5111222233334444',
  '4333333333333333',
  '5222333344445555',
]);

/**
 * Sandbox payout processor following the contract's payout card table. Deterministic in the card, so a
 * retried call answers the same way; real processors get the transaction id as idempotency key.
 */
export function sandboxPayouts(): PayoutProcessor {
  return {
    async send(request) {
      const reference = `sbxp_${request.transactionId}`;
      switch (request.pan) {
        case '4222222222222222':
        case '5111222233334444':
          return { outcome: 'paid', reference };
        case '4333333333333333':
        case '5222333344445555':
          return { outcome: 'declined', message: 'Payout declined by the card issuer.' };
        case '4000000000003220':
          return { outcome: 'verification' };
        default:
          return request.mode === 'test'
            ? { outcome: 'declined', message: 'The Card is not supported for testing.' }
            : { outcome: 'paid', reference };
      }
    },
    async confirm(request) {
      return request.decision === 'approve'
        ? { outcome: 'paid', reference: `sbxp_${request.transactionId}` }
        : { outcome: 'declined', message: 'Payout rejected at verification.' };
    },
  };
}
