import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseInput, text } from '../fields';
import { cardFields, cardholderFields, checkCardExpiry, closingFields } from '../card-fields';
import { createCardPayout } from '../../transactions/payout';
import { SANDBOX_PAYOUT_CARDS } from '../../sandbox/tables';
import type { Mode } from '../../lib/vocabulary';
import { replyCreated } from '../reply';
import type { RouteDeps } from '../deps';

/** Test mode also takes the interface's payout test cards, which do not pass the Luhn check. */
export const payoutRequest = (mode: Mode) =>
  z
    .object({
      wallet_id: text('wallet_id', { max: 64 }),
      ...cardholderFields,
      ...cardFields(false, mode === 'test' ? SANDBOX_PAYOUT_CARDS : undefined),
      ...closingFields,
    })
    .superRefine(checkCardExpiry);

export async function payoutRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const schemas = { test: payoutRequest('test'), live: payoutRequest('live') };
  app.post(
    '/api/v1/:mode/payout',
    { onRequest: app.authenticate, preValidation: app.decryptBody },
    async (request, reply) => {
      const input = parseInput(schemas[request.merchant.mode], request.body);
      return replyCreated(reply, await createCardPayout(deps.transactions, request.merchant, input));
    },
  );
}
