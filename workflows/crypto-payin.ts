import type { CryptoPayinInput, FirstAnswer } from '../src/temporal/contracts';
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
  const { crypto } = input;
  const settings = await store.cryptoSettings({ merchantId: input.merchantId });
  const address = await chain.openDepositAddress({
    transactionId: input.transactionId,
    network: crypto.cryptoNetwork,
  });
  const expiresAt = new Date(Date.now() + crypto.depositWindowSeconds * 1000).toISOString();
  const details = () => ({
    crypto_currency: crypto.cryptoCurrency,
    crypto_network: crypto.cryptoNetwork,
    crypto_payment_status: watcher.status,
    crypto_amount: formatUnits(BigInt(crypto.expectedUnits), crypto.decimals),
    crypto_paid_amount: formatUnits(watcher.paidUnits, crypto.decimals),
    deposit_address: address,
    expires_at: expiresAt,
    ...(watcher.refunded ? { refund_amount: watcher.refunded } : {}),
  });
  const watcher = new DepositWatcher(input.transactionId, crypto, settings, machine, details);

  await machine.move('REDIRECT', 'Redirect the customer to redirect_url to pay in crypto.', {
    redirectUrl: input.hostedPageUrl,
    details: details(),
  });
  await watcher.conclude(() =>
    ledger.creditFunds({
      walletId: input.walletId,
      transactionId: input.transactionId,
      amountMinor: input.creditMinor,
    }),
  );
  return machine.finish();
}
