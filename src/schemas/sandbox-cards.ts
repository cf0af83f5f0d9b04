/**
 * The sandbox as merchants read it (docs/sandbox.md, and /docs): which test cards do what, and the
 * terminals a sandbox merchant gets. The sandbox connectors in activities/connectors implement these.
 */
import type { TransactionKind } from '../lib/vocabulary';

export const SANDBOX_CARD_TABLE: [cards: string, outcome: string][] = [
  ['4111111111111111, 5555555555554444', 'REDIRECT to the 3-D Secure page, which approves or declines'],
  ['4242424242424242', 'SUCCESS without a challenge'],
  ['4000000000000002', 'FAILED, Card declined.'],
  ['4000000000009995', 'FAILED, Insufficient funds.'],
  ['4000000000000119', 'technical failure on the first terminal, SUCCESS on the next'],
  [
    '4000000000000770',
    'approved, but the answer is lost: PENDING while the status is asked for, then SUCCESS',
  ],
  [
    '4000000000000887',
    'approved, the answer lost, and the acquirer says "in progress" until ops retry it (a rehearsal)',
  ],
  ['any other card (test mode)', 'FAILED, The Card is not supported for testing.'],
];

export const SANDBOX_PAYOUT_TABLE: [cards: string, outcome: string][] = [
  ['4222222222222222, 5111222233334444', 'SUCCESS'],
  ['4333333333333333, 5222333344445555', 'FAILED (reservation released)'],
  ['4000000000003220', 'PENDING with a verification page, which approves or rejects'],
  ['4000000000003261', 'paid, but the answer is lost: PENDING while the status is asked for, then SUCCESS'],
  [
    '4000000000003279',
    'verification page, then the answer to the approval or rejection is lost: the status is asked for',
  ],
  ['4000000000003287', 'the processor refuses every send as an outage until ops retry it (a rehearsal)'],
  ['any other card (test mode)', 'FAILED, The Card is not supported for testing.'],
];

/** The interface's payout test cards that fail the Luhn check; the API accepts them in test mode only. */
export const SANDBOX_PAYOUT_CARDS: ReadonlySet<string> = new Set([
  '4222222222222222',
  '5111222233334444',
  '4333333333333333',
  '5222333344445555',
]);

/** Connectors written here that move no real money: `sandbox-acquirer`, `sandbox-payouts`, `sandbox-crypto`. */
export function isSandboxConnector(connector: string): boolean {
  return connector.startsWith('sandbox-');
}

export interface TerminalSpec {
  connector: string;
  kinds: TransactionKind[];
  priority: number;
  descriptor: string | null;
}

/** Sandbox terminals for every kind; two for cards so a technical failure visibly cascades. */
export const SANDBOX_TERMINALS: TerminalSpec[] = [
  { connector: 'sandbox-acquirer', kinds: ['card'], priority: 10, descriptor: 'SANDBOX*PRIMARY' },
  { connector: 'sandbox-acquirer', kinds: ['card'], priority: 20, descriptor: 'SANDBOX*FALLBACK' },
  { connector: 'sandbox-payouts', kinds: ['payout'], priority: 10, descriptor: 'SANDBOX*PAYOUT' },
  {
    connector: 'sandbox-crypto',
    kinds: ['ramp', 'crypto_payin'],
    priority: 10,
    descriptor: 'SANDBOX*CRYPTO',
  },
  { connector: 'sandbox-bank', kinds: ['apm'], priority: 10, descriptor: 'SANDBOX*BANK' },
  { connector: 'sandbox-wallet', kinds: ['apm'], priority: 20, descriptor: 'SANDBOX*WALLET' },
];
