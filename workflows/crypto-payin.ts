import { allHandlersFinished, condition, setHandler } from '@temporalio/workflow';
import {
  firstAnswerUpdate,
  stateQuery,
  type CryptoPayinInput,
  type FirstAnswer,
} from '../src/temporal/contracts';
import { formatUnits } from '../src/units';
import { chain, ledger, store } from './activities';
import { DepositWatcher } from './deposits';
import { TransactionStateMachine } from './state';

/**
 * A crypto payin: open a deposit address, watch deposits for the window, settle as FULLPAID, OVERPAID or
 * UNDERPAID by the merchant's settings, and credit the fiat amount to the merchant's wallet exactly once.
 */
export async function cryptoPayin(input: CryptoPayinInput): Promise<FirstAnswer> {
  const machine = new TransactionStateMachine(input.transactionId, 'crypto_payin');
  setHandler(firstAnswerUpdate, () => machine.firstAnswer());
  setHandler(stateQuery, () => machine.current());

  const { crypto } = input;
  const settings = await store.cryptoSettings({ merchantId: input.merchantId });
  const address = await chain.openDepositAddress({
    transactionId: input.transactionId,
    network: crypto.cryptoNetwork,
  });
  const expiresAt = new Date(Date.now() + crypto.depositWindowSeconds * 1000).toISOString();
  let refunded: string | undefined;
  const details = () => ({
    crypto_currency: crypto.cryptoCurrency,
    crypto_network: crypto.cryptoNetwork,
    crypto_payment_status: watcher.status,
    crypto_amount: formatUnits(BigInt(crypto.expectedUnits), crypto.decimals),
    crypto_paid_amount: formatUnits(watcher.paidUnits, crypto.decimals),
    deposit_address: address,
    expires_at: expiresAt,
    ...(refunded ? { refund_amount: refunded } : {}),
  });
  const watcher = new DepositWatcher(input.transactionId, crypto, settings, machine, details);

  await machine.move('REDIRECT', 'Redirect the customer to redirect_url to pay in crypto.', {
    redirectUrl: input.hostedPageUrl,
    details: details(),
  });
  const settled = await watcher.watch();
  const credit = () =>
    ledger.creditFunds({
      walletId: input.walletId,
      transactionId: input.transactionId,
      amountMinor: input.creditMinor,
    });

  if (settled.status === 'NONE') {
    await machine.move('FAILED', 'Transaction expired.', { details: details() });
  } else if (settled.status === 'UNDERPAID' && settings.underpaidPolicy === 'fail') {
    refunded = await watcher.refund(settled.paidUnits);
    await machine.move('FAILED', 'Transaction underpaid: the deposit was refunded.', {
      details: details(),
      refunded: true,
    });
  } else {
    if (settled.status === 'OVERPAID' && settings.overpaidPolicy === 'refund') {
      refunded = await watcher.refund(settled.paidUnits - BigInt(crypto.expectedUnits));
    }
    await credit();
    const message =
      settled.status === 'UNDERPAID'
        ? 'Transaction accepted for the partial amount.'
        : 'Transaction processed successfully.';
    await machine.move('SUCCESS', message, { details: details() });
  }

  await condition(allHandlersFinished);
  return machine.current();
}
