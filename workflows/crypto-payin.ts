import type { CryptoPayinInput, FirstAnswer, PayinDetails } from '../src/contracts';
import { settledFiat } from '../src/lib/settlement';
import { formatUnits } from '../src/lib/units';
import { ledger } from './activities';
import { DepositTally } from './deposit-tally';
import { depositsWithTheBinding, openDeposits } from './deposit-window';
import { attempt } from './failures';
import { TransactionStateMachine } from './state';
import { runTransaction } from './transaction';

/**
 * A crypto payin: open a deposit address, watch deposits for the window, settle as FULLPAID, OVERPAID or
 * UNDERPAID by the merchant's settings, and credit what was received, at the locked rate, to the
 * merchant's wallet exactly once.
 */
export async function cryptoPayin(input: CryptoPayinInput): Promise<FirstAnswer> {
  const machine = new TransactionStateMachine(input, 'crypto_payin', depositsWithTheBinding(input));
  const { crypto } = input;
  // Takes deposits from the first moment, before the run is bound (an update that finds no handler in
  // the activation it arrives in is refused).
  const tally = new DepositTally(input.transactionId, crypto, machine);
  return runTransaction(machine, async () => {
    const { settings, address, expiresAt } = await openDeposits(input, machine.proofs.firstStep.deposits);
    const details = (): PayinDetails => ({
      crypto_currency: crypto.cryptoCurrency,
      crypto_network: crypto.cryptoNetwork,
      crypto_payment_status: tally.status,
      crypto_amount: formatUnits(BigInt(crypto.expectedUnits), crypto.decimals),
      crypto_paid_amount: formatUnits(tally.paidUnits, crypto.decimals),
      deposit_address: address,
      expires_at: expiresAt,
      ...(tally.refunded ? { refund_amount: tally.refunded } : {}),
    });
    tally.open(settings, details);

    await machine.move('REDIRECT', 'Redirect the customer to redirect_url to pay in crypto.', {
      redirectUrl: input.hostedPageUrl,
      details: details(),
    });
    await tally.conclude(async (settlement) => {
      const credit = settledFiat(
        settlement.status,
        settlement.paidUnits,
        crypto,
        settings.overpaidPolicy === 'keep',
      );
      if (credit === 0n) return;
      const credited = await attempt(() =>
        ledger.creditFunds({
          walletId: input.walletId,
          transactionId: input.transactionId,
          amountMinor: credit.toString(),
        }),
      );
      if (credited.kind === 'failed') return { refused: `${credited.message} The deposit was refunded.` };
      // The ledger retries until Postgres answers; anything else is a fault for ops, not a guess.
      if (credited.kind !== 'done') throw new Error('the wallet credit failed');
    });
  });
}
