import type { Api } from '../route';
import { ApiError, fieldError } from '../../platform/errors';
import { JsonNumber } from '../../lib/json';
import { lookupTransaction } from '../../transactions/lookup';
import { testDeposit } from '../../chain/test-deposits';
import { transactionBody } from '../../transactions/view';
import type { RouteDeps } from '../deps';
import * as endpoints from '../../schemas/endpoints';

/**
 * Test mode only: pays into a transaction's deposit address. On a network with a registered node (a local
 * anvil under `npm run dev`) it is a real transfer from the node's faucet account, answered `pending` with
 * the confirmations the watcher waits for. On the sandbox chain the deposit is simulated and the answer
 * says how it was accounted: counted, refunded (it came after the payment was complete or the window
 * closed), held (after the transaction closed) or duplicate.
 */
export async function cryptoDepositRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.route({
    ...endpoints.simulateDeposit,
    onRequest: app.authenticate,
    handler: async (request) => {
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
  });
}
