import type { FastifyInstance } from 'fastify';
import { registerDecisionPage } from './decision-page';
import type { PageDeps } from '../deps';
import { formatMinor } from '../../lib/money';
import { brandName } from '../../lib/cards';

/** The sandbox issuer's 3DS challenge: approve or decline. */
export async function cardCheckoutRoutes(app: FastifyInstance, deps: PageDeps): Promise<void> {
  registerDecisionPage(app, deps, {
    kinds: ['card'],
    path: '/api/v1/:mode/card/checkout/:id',
    awaiting: 'REDIRECT',
    title: '3-D Secure verification',
    heading: 'Confirm your payment',
    details: (row) => [
      ['Merchant', row.descriptor ?? ''],
      ['Amount', `${formatMinor(row.amountMinor ?? 0n, row.currency)} ${row.currency}`],
      ['Card', `${row.cardBin ? `${brandName(row.cardBin)} ` : ''}•••• ${row.cardLast4 ?? ''}`],
    ],
    approve: 'Approve',
    decline: 'Decline',
    note: 'Sandbox issuer: approving completes the payment, declining fails it.',
  });
}
