import type { CryptoRampInput, FirstAnswer, RampDetails } from '../src/contracts';
import { settledFiat } from '../src/lib/settlement';
import { formatUnits } from '../src/lib/units';
import { chain } from './activities';
import { DepositTally } from './deposit-tally';
import { depositsWithTheBinding, openDeposits } from './deposit-window';
import { TransactionStateMachine } from './state';
import { runTransaction } from './transaction';

/**
 * A crypto ramp. ONRAMP: the customer pays fiat on the checkout page, then the crypto goes to their
 * wallet. OFFRAMP: the customer deposits crypto, which settles like a payin, then the fiat is paid out.
 */
export async function cryptoRamp(input: CryptoRampInput): Promise<FirstAnswer> {
  const machine = new TransactionStateMachine(
    input,
    'ramp',
    input.transactionType === 'OFFRAMP' ? depositsWithTheBinding(input) : undefined,
  );
  // An OFFRAMP takes deposits from the first moment, before the run is bound (an update that finds no
  // handler in the activation it arrives in is refused).
  const tally =
    input.transactionType === 'OFFRAMP'
      ? new DepositTally(input.transactionId, input.crypto, machine)
      : undefined;
  return runTransaction(machine, () => (tally ? offramp(input, machine, tally) : onramp(input, machine)));
}

function quotedDetails(input: CryptoRampInput): RampDetails {
  const { crypto } = input;
  return {
    transaction_type: input.transactionType,
    fiat: input.fiatCurrency,
    fiat_amount: input.fiatAmount,
    crypto: crypto.cryptoCurrency,
    crypto_amount: formatUnits(BigInt(crypto.expectedUnits), crypto.decimals),
    crypto_network: crypto.cryptoNetwork,
    wallet_address: input.walletAddress,
  };
}

/** The customer pays fiat on the checkout page, then the crypto goes to their wallet. */
async function onramp(input: CryptoRampInput, machine: TransactionStateMachine): Promise<void> {
  const { crypto } = input;
  const quoted = quotedDetails(input);
  const expiresAt = new Date(Date.now() + input.paymentWindowSeconds * 1000).toISOString();
  await machine.move('REDIRECT', 'Redirect the customer to redirect_url to pay.', {
    redirectUrl: input.hostedPageUrl,
    details: { ...quoted, expires_at: expiresAt },
  });
  const answer = await machine.awaitDecision(
    input.paymentWindowSeconds * 1000,
    'Waiting for the customer to pay',
  );
  if (answer === 'timeout') {
    await machine.move('FAILED', 'Transaction expired.');
  } else if (answer === 'stopped') {
    await machine.move('FAILED', machine.stopReason!);
  } else if (answer === 'decline') {
    await machine.move('FAILED', 'Payment declined.');
  } else {
    const step = `Send ${quoted.crypto_amount} ${crypto.cryptoCurrency} to ${input.walletAddress}`;
    machine.waiting.on('step', step);
    const txHash = await chain.sendCrypto.executeWithOptions({ summary: step }, [
      {
        transactionId: input.transactionId,
        network: crypto.cryptoNetwork,
        address: input.walletAddress,
        amount: quoted.crypto_amount,
        currency: crypto.cryptoCurrency,
      },
    ]);
    await machine.move('SUCCESS', 'Transaction processed successfully.', {
      details: { ...quoted, tx_hash: txHash },
    });
  }
}

/** The customer deposits crypto, which settles like a payin, then the fiat is paid out to them. */
async function offramp(
  input: CryptoRampInput,
  machine: TransactionStateMachine,
  tally: DepositTally,
): Promise<void> {
  const { crypto } = input;
  const quoted = quotedDetails(input);
  const { settings, address, expiresAt } = await openDeposits(input, machine.proofs.firstStep.deposits);
  let payoutReference: string | undefined;
  const details = (): RampDetails => ({
    ...quoted,
    crypto_payment_status: tally.status,
    crypto_paid_amount: formatUnits(tally.paidUnits, crypto.decimals),
    deposit_address: address,
    expires_at: expiresAt,
    ...(tally.refunded ? { refund_amount: tally.refunded } : {}),
    ...(payoutReference ? { fiat_payout_reference: payoutReference } : {}),
  });
  tally.open(settings, details);
  await machine.move('REDIRECT', 'Redirect the customer to redirect_url to send the crypto.', {
    redirectUrl: input.hostedPageUrl,
    details: details(),
  });

  // The customer is paid for what counted, at the locked rate; an overpayment's kept excess stays with
  // the merchant, so it adds nothing to the fiat paid out.
  await tally.conclude(async (settlement) => {
    const fiat = settledFiat(settlement.status, settlement.paidUnits, crypto, false);
    payoutReference = await chain.payoutFiat({
      transactionId: input.transactionId,
      currency: input.fiatCurrency,
      amount: formatUnits(fiat, crypto.fiatDecimals),
    });
  });
}
