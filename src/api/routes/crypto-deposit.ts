import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError, fieldError } from '../../platform/errors';
import { JsonNumber } from '../../lib/json';
import { decimalAmount, optional, parseInput, text } from '../fields';
import { lookupTransaction } from '../../transactions/lookup';
import { assetOf, randomTxHash, sandboxSender, submitDeposit } from '../../transactions/deposits';
import { payFromFaucet } from '../../chain/test-deposits';
import { transactionBody } from '../../transactions/view';
import type { RouteDeps } from '../deps';

const DepositRequest = z.object({
  amount: decimalAmount('amount'),
  tx_hash: optional(
    text('tx_hash', { max: 128, check: (v) => /^[A-Za-z0-9]+$/.test(v), rule: 'letters and digits only' }),
  ),
});

/**
 * Test mode only: pays into a transaction's deposit address. On a network with a registered node (a local
 * anvil under `npm run dev`) it is a real transfer from the node's faucet account, answered `pending` with
 * the confirmations the watcher waits for. On the sandbox chain the deposit is simulated and the answer
 * says how it was accounted: counted, refunded (it came after the payment was complete or the window
 * closed), held (after the transaction closed) or duplicate.
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
      const asset = assetOf(row);
      if (!asset) fieldError('transaction_id', 'This transaction does not take deposits.');
      const onChain = await payFromFaucet(deps.db, deps.config.MASTER_KEY, {
        transactionId: row.id,
        network: asset.network,
        currency: asset.code,
        amount: input.amount,
        txHash: input.tx_hash,
      });
      if (onChain.kind === 'refused') fieldError(onChain.field, onChain.message);
      if (onChain.kind === 'sent') {
        // Accounted by the chain watcher once it has its confirmations: the status and webhook tell.
        const pending = {
          tx_hash: onChain.txHash,
          amount: new JsonNumber(input.amount),
          disposition: 'pending',
          confirmations_required: onChain.confirmations,
        };
        return { ...transactionBody(row), deposit: pending };
      }
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
