import type { Mode } from '../../src/crypto/secrets';

/** The connector interface every card acquirer implements. */
export interface CardAcquirer {
  authorize(request: AuthorizeRequest): Promise<AuthorizeResult>;
  completeChallenge(request: {
    transactionId: string;
    decision: 'approve' | 'decline';
  }): Promise<AuthorizeResult>;
}

export interface AuthorizeRequest {
  transactionId: string;
  mode: Mode;
  pan: string;
  cvv: string;
  expiry: string;
  amountMinor: bigint;
  currency: string;
  /** 0 for the merchant's first terminal by priority. */
  terminalRank: number;
}

export type AuthorizeResult =
  | { outcome: 'approved'; reference: string }
  | { outcome: 'challenge'; reference: string }
  | { outcome: 'declined'; message: string };

/** The sandbox card table as merchants read it (served on /docs). */
export const SANDBOX_CARD_TABLE: [cards: string, outcome: string][] = [
  ['4111111111111111, 5555555555554444', 'REDIRECT to the 3-D Secure page, which approves or declines'],
  ['4242424242424242', 'SUCCESS without a challenge'],
  ['4000000000000002', 'FAILED, Card declined.'],
  ['4000000000009995', 'FAILED, Insufficient funds.'],
  ['4000000000000119', 'technical failure on the first terminal, SUCCESS on the next'],
  ['any other card (test mode)', 'FAILED, The Card is not supported for testing.'],
];

/** A connector-side fault (timeout, 5xx): worth retrying, then cascading to the next terminal. */
export class TechnicalFailure extends Error {}

/**
 * Sandbox acquirer following the contract's test-card table. Deterministic in the card and terminal, so a
 * retried call answers the same way and never authorizes twice.
 */
export function sandboxAcquirer(): CardAcquirer {
  return {
    async authorize(request) {
      const reference = `sbx_${request.transactionId}`;
      switch (request.pan) {
        case '4111111111111111':
        case '5555555555554444':
          return { outcome: 'challenge', reference };
        case '4242424242424242':
          return { outcome: 'approved', reference };
        case '4000000000000002':
          return { outcome: 'declined', message: 'Card declined.' };
        case '4000000000009995':
          return { outcome: 'declined', message: 'Insufficient funds.' };
        case '4000000000000119':
          if (request.terminalRank === 0)
            throw new TechnicalFailure('sandbox acquirer: simulated processor outage');
          return { outcome: 'approved', reference };
        default:
          return request.mode === 'test'
            ? { outcome: 'declined', message: 'The Card is not supported for testing.' }
            : { outcome: 'approved', reference };
      }
    },
    async completeChallenge(request) {
      return request.decision === 'approve'
        ? { outcome: 'approved', reference: `sbx_${request.transactionId}` }
        : { outcome: 'declined', message: '3DS authentication failed.' };
    },
  };
}
