import { named, TransactionParams, type Api } from '../route';
import { z } from 'zod';
import { ApiError, fieldError } from '../../platform/errors';
import { JsonNumber } from '../../lib/json';
import { about, decimalAmount, optional, text, SPACE } from '../../schemas/fields';
import { lookupTransaction } from '../../transactions/lookup';
import { testDeposit } from '../../chain/test-deposits';
import { transactionBody } from '../../transactions/view';
import type { RouteDeps } from '../deps';
import { DepositAnswer } from '../../schemas/answers';

export const DepositRequest = named(
  'DepositRequest',
  z.object({
    amount: about(decimalAmount('amount'), 'The crypto amount deposited.', 12.5),
    tx_hash: optional(
      about(
        text('tx_hash', {
          max: 128,
          check: (v) => /^[A-Za-z0-9]+$/.test(v),
          rule: 'letters and digits only',
          pattern: `^${SPACE}*[A-Za-z0-9]+${SPACE}*$`,
        }),
        "The deposit's chain transaction hash; one is made up when left out.",
      ),
    ),
  }),
);

/**
 * Test mode only: pays into a transaction's deposit address. On a network with a registered node (a local
 * anvil under `npm run dev`) it is a real transfer from the node's faucet account, answered `pending` with
 * the confirmations the watcher waits for. On the sandbox chain the deposit is simulated and the answer
 * says how it was accounted: counted, refunded (it came after the payment was complete or the window
 * closed), held (after the transaction closed) or duplicate.
 */
export async function cryptoDepositRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.post(
    '/api/v1/:mode/crypto/:id/deposit',
    {
      schema: {
        operationId: 'simulateDeposit',
        tags: ['Crypto'],
        summary: 'Simulate a deposit (test mode)',
        description:
          "Pays into an OFFRAMP's or payin's deposit address: counted, refunded (after completion or the " +
          'window), held (the transaction had closed) or duplicate. On a chain watched on a real node it is ' +
          'a real transfer, answered `pending`.',
        params: TransactionParams,
        body: DepositRequest,
      },
      config: {
        reference: {
          body: 'plain',
          answer: { schema: DepositAnswer, description: 'The transaction and the deposit.' },
          refusals: ['TRANSACTION_NOT_FOUND'],
          testOnly: true,
        },
      },
      onRequest: app.authenticate,
    },
    async (request) => {
      if (request.merchant.mode !== 'test') throw new ApiError('ROUTE_NOT_FOUND');
      const input = request.body;
      const row = await lookupTransaction(deps.db, request.merchant, request.params.id);
      if (!row || (row.kind !== 'ramp' && row.kind !== 'crypto_payin'))
        throw new ApiError('TRANSACTION_NOT_FOUND');
      const made = await testDeposit(
        { db: deps.db, temporal: deps.temporal, masterKey: deps.config.MASTER_KEY },
        row,
        { amount: input.amount, txHash: input.tx_hash },
      );
      if (made.kind === 'refused') fieldError(made.field, made.message);
      if (made.kind === 'on-chain') {
        // Accounted by the chain watcher once it has its confirmations: the status and webhook tell.
        const pending = {
          tx_hash: made.txHash,
          amount: new JsonNumber(input.amount),
          disposition: 'pending',
          confirmations_required: made.confirmations,
        };
        return { ...transactionBody(row), deposit: pending };
      }
      const { outcome, txHash } = made;
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
