import type { CryptoExpectation } from '../src/contracts';
import { formatUnits } from '../src/lib/units';
import { chain, records } from './activities';

/** A deposit as the workflow received it. */
export interface Received {
  txHash: string;
  units: bigint;
  sender?: string;
}

/**
 * Gives deposits back: refunded to their sender (keyed by the deposit, so a retry refunds once), or held
 * for ops with the reason when there is no sender to refund to.
 */
export class DepositReturns {
  /** Crypto sent back to the customer so far, base units. */
  refundedUnits = 0n;

  constructor(
    private readonly transactionId: string,
    private readonly expectation: CryptoExpectation,
  ) {}

  private format(units: bigint): string {
    return formatUnits(units, this.expectation.decimals);
  }

  /** Sends the excess of an overpayment back, from the latest deposits that have a sender first. */
  async refundExcess(counted: readonly Received[], excess: bigint): Promise<void> {
    let left = excess;
    const latestFirst = [...counted].reverse();
    const order = [...latestFirst.filter((d) => d.sender), ...latestFirst.filter((d) => !d.sender)];
    for (const deposit of order) {
      if (left === 0n) break;
      const part = deposit.units < left ? deposit.units : left;
      await this.giveBack(deposit, part, 'The excess of an overpayment, refunded by merchant setting.', true);
      left -= part;
    }
  }

  /** Refunds `units` of a deposit to its sender, or holds them for ops when there is no sender. */
  async giveBack(
    deposit: Received,
    units: bigint,
    reason: string,
    countedInPayment: boolean,
  ): Promise<'refunded' | 'held'> {
    const ref = {
      transactionId: this.transactionId,
      txHash: deposit.txHash,
      amount: this.format(deposit.units),
      sender: deposit.sender,
    };
    if (!deposit.sender) {
      await records.holdDeposit({
        ...ref,
        reason: `${reason} There is no sender address to refund to.`,
        countedInPayment,
        heldAmount: this.format(units),
      });
      return 'held';
    }
    await chain.refundDeposit({
      ...ref,
      sender: deposit.sender,
      network: this.expectation.cryptoNetwork,
      currency: this.expectation.cryptoCurrency,
      reason,
      countedInPayment,
      refundAmount: this.format(units),
      whole: units === deposit.units,
    });
    this.refundedUnits += units;
    return 'refunded';
  }
}
