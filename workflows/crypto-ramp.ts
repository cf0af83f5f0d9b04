import { allHandlersFinished, condition, setHandler } from '@temporalio/workflow';
import {
  firstAnswerUpdate,
  hostedDecisionUpdate,
  stateQuery,
  type CryptoRampInput,
  type FirstAnswer,
  type HostedDecision,
} from '../src/temporal/contracts';
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
  setHandler(firstAnswerUpdate, () => machine.firstAnswer());
  setHandler(stateQuery, () => machine.current());

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

  // An underpayment the merchant accepts pays out fiat in proportion, rounded down to the fiat's minor unit.
  const fiatFor = (paidUnits: bigint): string => {
    const expected = BigInt(crypto.expectedUnits);
    if (paidUnits >= expected) return input.fiatAmount;
    const fiatUnits = parseUnits(input.fiatAmount, input.fiatDecimals) ?? 0n;
    return formatUnits((fiatUnits * paidUnits) / expected, input.fiatDecimals);
  };

  if (input.transactionType === 'ONRAMP') {
    let decision: HostedDecision | undefined;
    let awaiting = false;
    setHandler(
      hostedDecisionUpdate,
      async (answer) => {
        decision = answer;
        return machine.finalAnswer();
      },
      {
        validator: (_answer: HostedDecision) => {
          if (!awaiting || decision !== undefined) throw new Error('This transaction awaits no payment.');
        },
      },
    );
    const expiresAt = new Date(Date.now() + input.paymentWindowSeconds * 1000).toISOString();
    await machine.move('REDIRECT', 'Redirect the customer to redirect_url to pay.', {
      redirectUrl: input.hostedPageUrl,
      details: { ...quoted, expires_at: expiresAt },
    });
    awaiting = true;
    const answered = await condition(() => decision !== undefined, input.paymentWindowSeconds * 1000);
    awaiting = false;
    if (!answered) {
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
  } else {
    const settings = await store.cryptoSettings({ merchantId: input.merchantId });
    const address = await chain.openDepositAddress({
      transactionId: input.transactionId,
      network: crypto.cryptoNetwork,
    });
    const expiresAt = new Date(Date.now() + crypto.depositWindowSeconds * 1000).toISOString();
    let refunded: string | undefined;
    let payoutReference: string | undefined;
    const details = () => ({
      ...quoted,
      crypto_payment_status: watcher.status,
      crypto_paid_amount: formatUnits(watcher.paidUnits, crypto.decimals),
      deposit_address: address,
      expires_at: expiresAt,
      ...(refunded ? { refund_amount: refunded } : {}),
      ...(payoutReference ? { fiat_payout_reference: payoutReference } : {}),
    });
    const watcher = new DepositWatcher(input.transactionId, crypto, settings, machine, details);
    await machine.move('REDIRECT', 'Redirect the customer to redirect_url to send the crypto.', {
      redirectUrl: input.hostedPageUrl,
      details: details(),
    });
    const settled = await watcher.watch();
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
      payoutReference = await chain.payoutFiat({
        transactionId: input.transactionId,
        currency: input.fiatCurrency,
        amount: fiatFor(settled.paidUnits),
      });
      await machine.move('SUCCESS', 'Transaction processed successfully.', { details: details() });
    }
  }

  await condition(allHandlersFinished);
  return machine.current();
}
