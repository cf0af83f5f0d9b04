import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { httpUrl, parseInput } from '../fields';
import { cardFields, cardholderFields, checkCardExpiry, closingFields } from '../card-fields';
import { createCardPayment } from '../../transactions/card';
import { replyCreated } from '../reply';
import type { RouteDeps } from '../deps';

export const CardRequest = z
  .object({
    ...cardholderFields,
    ...cardFields(true),
    redirect_url: httpUrl('redirect_url'),
    ...closingFields,
  })
  .superRefine(checkCardExpiry);

export async function cardRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.post(
    '/api/v1/:mode/card',
    { onRequest: app.authenticate, preValidation: app.decryptBody },
    async (request, reply) => {
      const input = parseInput(CardRequest, request.body);
      return replyCreated(reply, await createCardPayment(deps.transactions, request.merchant, input));
    },
  );
}
