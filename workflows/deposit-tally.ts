import { condition, patched, workflowInfo } from '@temporalio/workflow';
import { setInternalHandler } from './proofs';
import {
  closeWindowUpdate,
  depositUpdate,
  type CryptoExpectation,
  type Deposit,
  type DepositDisposition,
  type DepositReceipt,
} from '../src/contracts';
import { classify, toleranceUnits, type PaymentStatus } from '../src/lib/settlement';
import { canonicalDecimal, formatUnits, parseUnits } from '../src/lib/units';
import { records } from './activities';
import { DepositReturns, type Received } from './deposit-returns';
import type { TransactionStateMachine } from './state';
import type { CryptoSettings } from '../activities/crypto';
import { refusal } from './failures';

export interface Settlement {
  status: PaymentStatus;
  paidUnits: bigint;
}

/**
 * A Reset's run counts what the run it replaced counted from the record (`countWhatTheReplacedRunCounted`).
 * Only a Reset's runs take this branch, told by their run id, which a worker replaying one knows; an
 * offline replay of a history (the replay test) does not, so none of a Reset's run is kept there.
 * Not a patch to retire: while a Reset's run replays the history it copied, `patched` answers false (the
 * run it replaced never took this branch), so the branch runs only where the new run goes on anew; a
 * `deprecatePatch` here would schedule the read during that replay and fail the run as nondeterministic.
 */
const RESET_RUNS_COUNT_RECORDED_DEPOSITS = 'reset-runs-count-recorded-deposits';

/** What `conclude` needs from the flow once the payment is settled: nothing, or why it cannot be taken. */
export type SettlementOutcome = void | { refused: string };

/**
 * A transaction's tally of the deposits to its address: the chain watcher (src/chain/watcher.ts) reads
 * the chains, this decides in the workflow what each deposit is. Every deposit arrives as an update and
 * is accounted exactly once, decided the moment it arrives: counted towards the payment while the window
 * is open and the payment incomplete, otherwise refunded to its sender (or held for ops when there is no
 * sender). The workflow's own record of transaction hashes makes a repeated deposit count once.
 */
export class DepositTally {
  private readonly seen = new Set<string>();
  private readonly counted: Received[] = [];
  private paid = 0n;
  private counting = false;
  /** Set by a test-mode request to close the window now (`closeWindowUpdate`). */
  private closingEarly = false;
  /** Set once the window has been open and closed again: a deposit after that is late, not early. */
  private closed = false;
  private deadline: number | undefined;
  private readonly expected: bigint;
  private readonly returns: DepositReturns;
  /** The merchant's settings and what the transaction shows, from `open` on. */
  private terms:
    { settings: CryptoSettings; tolerance: bigint; details: () => Record<string, unknown> } | undefined;

  /**
   * Takes deposits from the workflow's first moment: one sent while the address is still being opened (a
   * sandbox deposit made on a first answer that came back PENDING) waits for `open` instead of being refused
   * for want of a handler. The fault suite found such deposits held for ops and their payments left open.
   */
  constructor(
    private readonly transactionId: string,
    private readonly expectation: CryptoExpectation,
    private readonly machine: TransactionStateMachine,
  ) {
    this.expected = BigInt(expectation.expectedUnits);
    this.returns = new DepositReturns(transactionId, expectation);
    setInternalHandler(machine.proofs, depositUpdate, (deposit: Deposit) => this.receive(deposit), {
      description: 'a deposit the chain tally saw confirmed on the deposit address.',
      validator: (deposit: Deposit) => {
        if (!/^\d+$/.test(deposit.units) || BigInt(deposit.units) <= 0n)
          throw refusal('A deposit must be positive.');
        if (!deposit.txHash) throw refusal('A deposit needs its transaction hash.');
        if (deposit.source === 'sandbox' && machine.mode !== 'test')
          throw refusal('Sandbox deposits are for test mode only.');
      },
    });
    setInternalHandler(
      machine.proofs,
      closeWindowUpdate,
      async () => {
        this.closingEarly = true;
        await condition(() => this.closed);
        return 'closed' as const;
      },
      {
        description: 'test mode: closes the deposit window now, as if its time had run out.',
        validator: () => {
          if (machine.mode !== 'test') throw refusal('Closing a deposit window early is for test mode only.');
          if (!this.counting) throw refusal('The deposit window is not open.');
        },
      },
    );
  }

  /** Once the address is open: the merchant's settings that settle the payment and what it shows. */
  open(settings: CryptoSettings, details: () => Record<string, unknown>): void {
    this.terms = { settings, tolerance: toleranceUnits(settings, this.expectation), details };
  }

  private get opened() {
    if (!this.terms) throw new Error('DepositTally used before open()');
    return this.terms;
  }

  private get tolerance(): bigint {
    return this.opened.tolerance;
  }

  private get settings(): CryptoSettings {
    return this.opened.settings;
  }

  private details(): Record<string, unknown> {
    return this.opened.details();
  }

  get paidUnits(): bigint {
    return this.paid;
  }

  /** The payment status so far, or null before anything arrived. */
  get status(): PaymentStatus | null {
    return this.paid === 0n ? null : classify(this.paid, this.expected, this.tolerance);
  }

  /** Crypto sent back to the customer so far, as text, once anything was. */
  get refunded(): string | undefined {
    return this.returns.refundedUnits > 0n ? this.format(this.returns.refundedUnits) : undefined;
  }

  /** What the Temporal UI and `ops` show while deposits are awaited. */
  private showProgress(): void {
    const { cryptoCurrency } = this.expectation;
    const received = `${this.format(this.paid)} of ${this.format(this.expected)} ${cryptoCurrency} received`;
    this.machine.waiting.on('deposits', `Waiting for deposits: ${received}`, this.deadline);
  }

  private get complete(): boolean {
    return this.paid >= this.expected - this.tolerance;
  }

  private format(units: bigint): string {
    return formatUnits(units, this.expectation.decimals);
  }

  private async receive(deposit: Deposit): Promise<DepositReceipt> {
    const receipt = (disposition: DepositDisposition, answer = this.machine.current()) => ({
      ...answer,
      disposition,
    });
    if (this.seen.has(deposit.txHash)) return receipt('duplicate');
    this.seen.add(deposit.txHash);
    if (!this.terms) await condition(() => this.terms !== undefined);
    if (!this.counting && !this.closed) {
      await condition(() => this.counting || this.closed || this.machine.stopReason !== undefined);
    }
    const received: Received = {
      txHash: deposit.txHash,
      units: BigInt(deposit.units),
      sender: deposit.sender,
    };
    // Decided before anything is awaited: what counts is exactly what the settlement sees.
    if (!this.counting) {
      const reason =
        this.paid > 0n && this.complete
          ? 'Arrived after the payment was complete.'
          : 'Arrived after the deposit window closed.';
      const disposition = await this.returns.giveBack(received, received.units, reason, false);
      await this.machine.record({ details: this.details() });
      return receipt(disposition);
    }
    this.paid += received.units;
    this.counted.push(received);
    this.showProgress();
    await records.recordDeposit({
      transactionId: this.transactionId,
      txHash: received.txHash,
      amount: this.format(received.units),
      sender: received.sender,
    });
    await this.machine.record({ details: this.details() });
    // The deposit that completes the payment answers with the settled outcome, unless its sender waits on
    // nothing but the accounting (the chain tally, which serves every customer of its node).
    const settled = this.complete && deposit.answer !== 'accounted';
    return receipt('counted', settled ? await this.machine.finalAnswer() : undefined);
  }

  /** Counts deposits until they cover the expected amount, the window closes, or a stop is requested. */
  private async watch(): Promise<'complete' | 'expired' | 'stopped'> {
    this.counting = true;
    this.deadline = Date.now() + this.expectation.depositWindowSeconds * 1000;
    await this.countWhatTheReplacedRunCounted();
    this.showProgress();
    await condition(
      () => this.complete || this.machine.stopReason !== undefined || this.closingEarly,
      this.expectation.depositWindowSeconds * 1000,
      { summary: 'Waiting for deposits' },
    );
    await this.countWhatTheReplacedRunCounted();
    this.counting = false;
    this.closed = true;
    if (this.machine.stopReason !== undefined) return 'stopped';
    return this.complete ? 'complete' : 'expired';
  }

  /**
   * In a run a Reset started: the deposits the run it replaced counted after the Reset's point reach this
   * run only as reapplied updates, whose proofs were made for that run and are refused here. They are
   * counted from the service's record instead, each once (docs/operations.md, what Reset does).
   */
  private async countWhatTheReplacedRunCounted(): Promise<void> {
    const info = workflowInfo();
    const resetRun =
      info.runId !== info.firstExecutionRunId && info.continuedFromExecutionRunId === undefined;
    if (!resetRun || !patched(RESET_RUNS_COUNT_RECORDED_DEPOSITS)) return;
    for (const deposit of await records.countedDepositsOf({ transactionId: this.transactionId })) {
      if (this.seen.has(deposit.txHash)) continue;
      this.seen.add(deposit.txHash);
      const exact = canonicalDecimal(deposit.amount);
      const units = exact === undefined ? undefined : parseUnits(exact, this.expectation.decimals);
      if (units === undefined || units <= 0n) continue;
      this.paid += units;
      this.counted.push({ txHash: deposit.txHash, units, sender: deposit.sender });
    }
    this.showProgress();
  }

  /**
   * Watches until settled, then ends the transaction as the contract says: nothing received is
   * "Transaction expired."; an underpayment fails with its deposits refunded, unless the merchant accepts
   * partial amounts; an overpayment keeps or refunds the excess by merchant setting; a stop refunds
   * everything. `onSettled` runs before the move to SUCCESS (credit the wallet, pay the fiat out) and may
   * refuse the payment, which then fails with its deposits refunded.
   */
  async conclude(onSettled: (settlement: Settlement) => Promise<SettlementOutcome>): Promise<void> {
    const ended = await this.watch();
    if (ended === 'stopped') {
      await this.fail(this.machine.stopReason!);
      return;
    }
    if (this.paid === 0n) {
      await this.machine.move('FAILED', 'Transaction expired.', { details: this.details() });
      return;
    }
    const settlement = { status: classify(this.paid, this.expected, this.tolerance), paidUnits: this.paid };
    if (settlement.status === 'UNDERPAID' && this.settings.underpaidPolicy === 'fail') {
      await this.fail('Transaction underpaid: the deposit was refunded.');
      return;
    }
    const outcome = await onSettled(settlement);
    if (outcome) {
      await this.fail(outcome.refused);
      return;
    }
    if (settlement.status === 'OVERPAID' && this.settings.overpaidPolicy === 'refund') {
      await this.returns.refundExcess(this.counted, this.paid - this.expected);
    }
    const message =
      settlement.status === 'UNDERPAID'
        ? 'Transaction accepted for the partial amount.'
        : 'Transaction processed successfully.';
    await this.machine.move('SUCCESS', message, { details: this.details() });
  }

  /** Fails the transaction with every counted deposit given back. */
  private async fail(message: string): Promise<void> {
    for (const deposit of this.counted) await this.returns.giveBack(deposit, deposit.units, message, true);
    await this.machine.move('FAILED', message, {
      details: this.details(),
      ...(this.returns.refundedUnits > 0n ? { refunded: true } : {}),
    });
  }
}
