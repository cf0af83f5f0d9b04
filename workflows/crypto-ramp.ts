import type { CryptoRampInput, FirstAnswer } from '../src/temporal/contracts';
import { formatUnits, parseUnits } from '../src/units';
import { chain, store } from './activities';
import { DepositWatcher } from './deposits';
import { TransactionStateMachine } from './state';

/**
 * A crypto ramp. ONRAMP: the customer pays fiat on the checkout page, then the crypto goes to their
 * wallet. OFFRAMP: the customer deposits crypto, which settles like a payin, then the fiat is paid out.
 */
export async function cryptoRamp(input: CryptoRampInput): Promise<FirstAnswer> {
  const machine = new TransactionStateMachine(input.transactionId, 'ramp');
  const { crypto } = input;
  const cryptoAmount = formatUnits(BigInt(crypto.expectedUnits), crypto.decimals);
  const quoted = {
    transaction_type: input.transactionType,
    fiat: input.fiatCurrency,
    fiat_amount: input.fiatAmount,
    crypto: crypto.cryptoCurrency,
    crypto_amount: cryptoAmount,
    crypto_network: crypto.cryptoNetwork,
    wallet_address: input.walletAddress,
  };

  if (input.transactionType === 'ONRAMP') {
    const expiresAt = new Date(Date.now() + input.paymentWindowSeconds * 1000).toISOString();
    await machine.move('REDIRECT', 'Redirect the customer to redirect_url to pay.', {
      redirectUrl: input.hostedPageUrl,
      details: { ...quoted, expires_at: expiresAt },
    });
    const decision = await machine.awaitDecision(input.paymentWindowSeconds * 1000);
    if (!decision) {
      await machine.move('FAILED', 'Transaction expired.');
    } else if (decision === 'decline') {
      await machine.move('FAILED', 'Payment declined.');
    } else {
      const txHash = await chain.sendCrypto({
        transactionId: input.transactionId,
        network: crypto.cryptoNetwork,
        address: input.walletAddress,
        amount: cryptoAmount,
        currency: crypto.cryptoCurrency,
      });
      await machine.move('SUCCESS', 'Transaction processed successfully.', {
        details: { ...quoted, tx_hash: txHash },
      });
    }
    return machine.finish();
  }

  const settings = await store.cryptoSettings({ merchantId: input.merchantId });
  const address = await chain.openDepositAddress({
    transactionId: input.transactionId,
    network: crypto.cryptoNetwork,
  });
  const expiresAt = new Date(Date.now() + crypto.depositWindowSeconds * 1000).toISOString();
  let payoutReference: string | undefined;
  const details = () => ({
    ...quoted,
    crypto_payment_status: watcher.status,
    crypto_paid_amount: formatUnits(watcher.paidUnits, crypto.decimals),
    deposit_address: address,
    expires_at: expiresAt,
    ...(watcher.refunded ? { refund_amount: watcher.refunded } : {}),
    ...(payoutReference ? { fiat_payout_reference: payoutReference } : {}),
  });
  const watcher = new DepositWatcher(input.transactionId, crypto, settings, machine, details);
  await machine.move('REDIRECT', 'Redirect the customer to redirect_url to send the crypto.', {
    redirectUrl: input.hostedPageUrl,
    details: details(),
  });

  // An underpayment the merchant accepts pays out fiat in proportion, rounded down to the fiat's minor unit.
  const fiatFor = (paidUnits: bigint): string => {
    const expected = BigInt(crypto.expectedUnits);
    if (paidUnits >= expected) return input.fiatAmount;
    const fiatUnits = parseUnits(input.fiatAmount, input.fiatDecimals) ?? 0n;
    return formatUnits((fiatUnits * paidUnits) / expected, input.fiatDecimals);
  };
  await watcher.conclude(async (paidUnits) => {
    payoutReference = await chain.payoutFiat({
      transactionId: input.transactionId,
      currency: input.fiatCurrency,
      amount: fiatFor(paidUnits),
    });
  });
  return machine.finish();
}
