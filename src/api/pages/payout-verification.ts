import type { FastifyInstance } from 'fastify';
import { registerDecisionPage } from './decision-page';
import type { PageDeps } from '../deps';
import { formatMinor } from '../../lib/money';

/** The sandbox processor's cardholder verification for a payout: approve or reject. */
export async function payoutVerificationRoutes(app: FastifyInstance, deps: PageDeps): Promise<void> {
  registerDecisionPage(app, deps, {
    kinds: ['payout'],
    path: '/api/v1/:mode/payout/verification/:id',
    awaiting: 'PENDING',
    title: 'Payout verification',
    heading: 'Confirm the payout to your card',
    details: (row) => [
      ['Amount', `${formatMinor(row.amountMinor ?? 0n, row.currency)} ${row.currency}`],
      ['Card', `•••• ${row.cardLast4 ?? ''}`],
      ['Recipient', `${row.customer.first_name} ${row.customer.last_name}`],
    ],
    approve: 'Approve',
    decline: 'Reject',
    note: 'Sandbox processor: approving sends the payout, rejecting cancels it and returns the funds.',
  });
}
