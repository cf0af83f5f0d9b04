import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError, fieldError } from '../../platform/errors';
import { JsonNumber } from '../../lib/json';
import { decimalAmount, optional, parseInput, text } from '../fields';
import { lookupTransaction } from '../../transactions/lookup';
import { randomTxHash, sandboxSender, submitDeposit } from '../../transactions/deposits';
import { transactionBody } from '../../transactions/view';
import type { RouteDeps } from '../deps';

const DepositRequest = z.object({
  amount: decimalAmount('amount'),
  tx_hash: optional(
    text('tx_hash', { max: 128, check: (v) => /^[A-Za-z0-9]+$/.test(v), rule: 'letters and digits only' }),
  ),
});

/**
 * Test mode only: simulates a deposit to a transaction's address on the sandbox chain. The answer is the
 * transaction's status body plus how the deposit was accounted: counted, refunded (it came after the
 * payment was complete or the window closed), held (after the transaction closed) or duplicate.
 */
export async function cryptoDepositRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.post<{ Params: { id: string } }>(
    '/api/v1/:mode/crypto/:id/deposit',
    { onRequest: app.authenticate },
    async (request) => {
      if (request.merchant.mode !== 'test') throw new ApiError('ROUTE_NOT_FOUND');
      const input = parseInput(DepositRequest, request.body ?? {});
      const row = await lookupTransaction(deps.db, request.merchant, request.params.id);
      if (!row || (row.kind !== 'ramp' && row.kind !== 'crypto_payin'))
        throw new ApiError('TRANSACTION_NOT_FOUND');
      const txHash = input.tx_hash ?? randomTxHash();
      const deposit = { amount: input.amount, txHash, sender: sandboxSender(txHash) };
      const outcome = await submitDeposit(deps.db, deps.temporal, row, deposit);
      if (outcome === 'not-accepting')
        fieldError('transaction_id', 'This transaction does not take deposits.');
      if ('invalid' in outcome) fieldError('amount', outcome.invalid);
      const after = (await lookupTransaction(deps.db, request.merchant, row.id)) ?? row;
      const accounted = {
        tx_hash: txHash,
        amount: new JsonNumber(input.amount),
        disposition: outcome.disposition,
      };
      return { ...transactionBody(after), deposit: accounted };
    },
  );
}
