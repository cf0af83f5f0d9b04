import { deprecatePatch } from '@temporalio/workflow';
import { SEND_LANDS_WITHIN_MS, connectorKeys, type CardPayoutInput } from '../src/contracts';
import type { TerminalChoice } from '../activities/projection';
import { attempt } from './failures';
import { connector, lookup } from './activities';
import type { TransactionStateMachine } from './state';
import { askUntilKnown } from './unknown-outcome';

/** Where a payout stands with its processor; `settled` when the send's own step settled the funds. */
export type Sent =
  | { kind: 'paid'; terminal: TerminalChoice; settled: boolean }
  | { kind: 'verification'; terminal: TerminalChoice; reference: string }
  | { kind: 'declined'; message: string };

/**
 * A lost send's "not found" is trusted only once the send can no longer land. Deprecated: histories from
 * before it (which trusted it at once) can no longer be open (docs/architecture.md, retiring a patch).
 */
const NOT_FOUND_AFTER_THE_DEADLINE = 'payout-not-found-after-the-deadline';

/** How long a payout keeps trying when every terminal refuses it (nothing was sent), by default. */
const SEND_WINDOW_SECONDS = 60 * 60;

/**
 * Tries the payout terminals by priority. A decline is the answer; a send the processor certainly did
 * not process moves on to the next terminal; a lost answer is asked for until the processor knows. When
 * every terminal refused, nothing was sent: the round is tried again on a backoff (ops can cut it short)
 * until the send window closes. Each send reserves the `funds` first and settles them when paid, in the
 * same step (a refused reserve is a decline).
 */
export async function send(
  machine: TransactionStateMachine,
  input: CardPayoutInput,
  funds: { walletId: string; amountMinor: string },
  terminals: TerminalChoice[],
): Promise<Sent> {
  if (terminals.length === 0)
    return { kind: 'declined', message: 'No terminal is available for this transaction.' };
  const deadline = Date.now() + (input.sendWindowSeconds ?? SEND_WINDOW_SECONDS) * 1000;
  for (let round = 1; ; round++) {
    for (const terminal of terminals) {
      if (machine.stopReason) return { kind: 'declined', message: machine.stopReason };
      const sent = await sendThrough(machine, input, terminal, funds);
      if (sent) return sent;
    }
    const left = deadline - Date.now();
    if (left <= 0 || machine.stopReason)
      return { kind: 'declined', message: machine.stopReason ?? 'The payout could not be processed.' };
    // Nothing was sent anywhere: a stop ends this wait at once.
    await machine.waiting.backoff(
      Math.min(60_000 * 2 ** (round - 1), 15 * 60_000, left),
      `No payout terminal took the payout (round ${round})`,
      { stoppable: true },
    );
  }
}

/** One terminal's send; undefined when the processor certainly did not process it. */
async function sendThrough(
  machine: TransactionStateMachine,
  input: CardPayoutInput,
  terminal: TerminalChoice,
  funds: { walletId: string; amountMinor: string },
): Promise<Sent | undefined> {
  const payoutKey = connectorKeys.payout(input.transactionId, terminal.terminalId);
  const request = {
    transactionId: input.transactionId,
    payoutKey,
    mode: input.mode,
    connector: terminal.connector,
    amountMinor: input.amountMinor,
    currency: input.currency,
  };
  const step = `Reserve the funds and send the payout through ${terminal.terminalId} (${terminal.connector})`;
  machine.waiting.on('step', step);
  const result = await attempt<{ outcome: 'paid' | 'verification'; reference: string; settled?: boolean }>(
    () => connector.reserveAndSendPayout.executeWithOptions({ summary: step }, [{ ...request, funds }]),
  );
  if (result.kind === 'failed') return { kind: 'declined', message: result.message };
  if (result.kind === 'notProcessed') return undefined;
  // A lost answer: the processor's "not found" counts only once the last attempt's request can no longer
  // land (its deadline has passed), so the payout never goes to another terminal while it may still pay.
  if (result.kind !== 'done') deprecatePatch(NOT_FOUND_AFTER_THE_DEADLINE);
  const known =
    result.kind === 'done'
      ? result.value
      : await askUntilKnown(
          machine,
          terminal.connector,
          () => lookup.lookupPayout({ connector: terminal.connector, payoutKey }),
          { notFoundTrustedFrom: Date.now() + SEND_LANDS_WITHIN_MS },
        );
  if (known.outcome === 'not_found') return undefined;
  if (known.outcome === 'declined') return { kind: 'declined', message: known.message };
  if (known.outcome === 'paid')
    return { kind: 'paid', terminal, settled: 'settled' in known && known.settled === true };
  return { kind: 'verification', terminal, reference: known.reference };
}
