import { condition, setHandler } from '@temporalio/workflow';
import { depositUpdate, type CryptoExpectation, type Deposit } from '../src/temporal/contracts';
import { formatUnits, parseUnits } from '../src/units';
import { chain, store } from './activities';
import type { TransactionStateMachine } from './state';
import type { CryptoSettings } from '../activities/crypto';

export type PaymentStatus = 'FULLPAID' | 'OVERPAID' | 'UNDERPAID';

export interface Settlement {
  status: PaymentStatus | 'NONE';
  paidUnits: bigint;
}

/**
 * Waits for deposits to an address until they cover the expected amount (within the merchant's
 * tolerance) or the window closes. Deposits arrive as updates, count once per transaction hash, and each
 * one is projected so the status endpoint and the checkout page show what has arrived.
 */
export class DepositWatcher {
  private paid = 0n;
  private accepting = false;
  private refundedAmount: string | undefined;
  private readonly tolerance: bigint;

  constructor(
    private readonly transactionId: string,
    private readonly expectation: CryptoExpectation,
    private readonly settings: CryptoSettings,
    private readonly machine: TransactionStateMachine,
    private readonly details: () => Record<string, unknown>,
  ) {
    this.tolerance =
      parseUnits(truncate(settings.tolerance, expectation.decimals), expectation.decimals) ?? 0n;
    setHandler(
      depositUpdate,
      async (deposit: Deposit) => {
        const units = BigInt(deposit.units);
        const fresh = await store.recordDeposit({
          transactionId: this.transactionId,
          txHash: deposit.txHash,
          amount: formatUnits(units, expectation.decimals),
        });
        if (fresh && this.accepting) {
          this.paid += units;
          await this.machine.record({ details: this.details() });
        }
        // The deposit that completes the payment answers with the settled outcome.
        if (this.paid >= BigInt(expectation.expectedUnits) - this.tolerance)
          return this.machine.finalAnswer();
        return this.machine.current();
      },
      {
        validator: (deposit: Deposit) => {
          if (!this.accepting) throw new Error('This transaction accepts no deposits.');
          if (!/^\d+$/.test(deposit.units) || BigInt(deposit.units) <= 0n)
            throw new Error('A deposit must be positive.');
        },
      },
    );
  }

  get paidUnits(): bigint {
    return this.paid;
  }

  /** The payment status so far, or null before anything arrived. */
  get status(): PaymentStatus | null {
    if (this.paid === 0n) return null;
    return classify(this.paid, BigInt(this.expectation.expectedUnits), this.tolerance);
  }

  async watch(): Promise<Settlement> {
    const expected = BigInt(this.expectation.expectedUnits);
    this.accepting = true;
    await condition(
      () => this.paid >= expected - this.tolerance,
      this.expectation.depositWindowSeconds * 1000,
    );
    this.accepting = false;
    return {
      status: this.paid === 0n ? 'NONE' : classify(this.paid, expected, this.tolerance),
      paidUnits: this.paid,
    };
  }

  /** What was sent back to the customer, as text, once a refund happened. */
  get refunded(): string | undefined {
    return this.refundedAmount;
  }

  /**
   * Watches until settled, then ends the transaction as the contract says: nothing received is
   * "Transaction expired."; an underpayment fails with its deposit refunded, unless the merchant accepts
   * partial amounts; an overpayment keeps or refunds the excess by merchant setting. `onSuccess` runs
   * before the move to SUCCESS (credit the wallet, pay the fiat out).
   */
  async conclude(onSuccess: (paidUnits: bigint) => Promise<void>): Promise<void> {
    const settled = await this.watch();
    if (settled.status === 'NONE') {
      await this.machine.move('FAILED', 'Transaction expired.', { details: this.details() });
    } else if (settled.status === 'UNDERPAID' && this.settings.underpaidPolicy === 'fail') {
      await this.refund(settled.paidUnits);
      await this.machine.move('FAILED', 'Transaction underpaid: the deposit was refunded.', {
        details: this.details(),
        refunded: true,
      });
    } else {
      if (settled.status === 'OVERPAID' && this.settings.overpaidPolicy === 'refund') {
        await this.refund(settled.paidUnits - BigInt(this.expectation.expectedUnits));
      }
      await onSuccess(settled.paidUnits);
      const message =
        settled.status === 'UNDERPAID'
          ? 'Transaction accepted for the partial amount.'
          : 'Transaction processed successfully.';
      await this.machine.move('SUCCESS', message, { details: this.details() });
    }
  }

  private async refund(units: bigint): Promise<void> {
    const amount = formatUnits(units, this.expectation.decimals);
    await chain.refundCrypto({
      transactionId: this.transactionId,
      network: this.expectation.cryptoNetwork,
      amount,
      currency: this.expectation.cryptoCurrency,
    });
    this.refundedAmount = amount;
  }
}

export function classify(paid: bigint, expected: bigint, tolerance: bigint): PaymentStatus {
  const difference = paid - expected;
  if ((difference < 0n ? -difference : difference) <= tolerance) return 'FULLPAID';
  return paid > expected ? 'OVERPAID' : 'UNDERPAID';
}

function truncate(decimal: string, decimals: number): string {
  const [whole, fraction = ''] = decimal.split('.');
  return fraction ? `${whole}.${fraction.slice(0, decimals)}` : whole!;
}
