import { deprecatePatch, patched, workflowInfo } from '@temporalio/workflow';
import { SEND_LANDS_WITHIN_MS, connectorKeys, type CardPayoutInput } from '../src/contracts';
import type { TerminalChoice } from '../activities/projection';
import type { SentPayout } from '../activities/payouts';
import { attempt } from './failures';
import { connector, lookup, quickConnector, store } from './activities';
import type { TransactionStateMachine } from './state';
import { askUntilKnown } from './unknown-outcome';
import { taskStartedAt } from './task-clock';

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

/**
 * An ending asks about every key the payout noted, the ones it learnt were refused included: a later
 * round sends them again, and an attempt of a later task that was lost may have sent one the processor
 * paid. Histories from before skipped the keys known refused, so a stop after a refused round could end
 * FAILED while such a resend had paid. Asked only where a noted key was known refused: other endings
 * take the same commands as before, and carry no marker.
 */
const ENDING_ASKS_REFUSED_KEYS = 'payout-ending-asks-refused-keys';

/** How long a payout keeps trying when every terminal refuses it (nothing was sent), by default. */
const SEND_WINDOW_SECONDS = 60 * 60;

/**
 * Tries the payout terminals by priority. A decline is the answer; a send the processor certainly did
 * not process moves on to the next terminal; a lost answer is asked for until the processor knows. When
 * every terminal refused, nothing was sent: the round is tried again on a backoff (ops can cut it short)
 * until the send window closes. Each send reserves the `funds` first and settles them when paid, in the
 * same step (a refused reserve is a decline).
 *
 * `inTheTask`: each send runs inside the workflow task (a local activity; runs from before sent in a step
 * of their own). Each notes its key before anything else (`reserveAndSendPayout`), so what a lost attempt
 * of the task may have sent is on record. Its retry may route differently (a stop arrived, the terminals
 * changed): whatever the lost attempt noted is asked about before anything else is sent, and the payout
 * ends only once its sends are closed (`endSends`), so no attempt notes a key after that.
 */
export async function send(
  machine: TransactionStateMachine,
  input: CardPayoutInput,
  funds: { walletId: string; amountMinor: string },
  terminals: TerminalChoice[],
  inTheTask: boolean,
): Promise<Sent> {
  // The keys this payout sent that the processor certainly did not process (sends in the task only).
  const notProcessed = inTheTask ? [] : undefined;
  const ending = async (message: string): Promise<Sent> =>
    (notProcessed && (await endSends(machine, input, notProcessed)).known) || { kind: 'declined', message };
  if (terminals.length === 0) return ending('No terminal is available for this transaction.');
  const deadline = Date.now() + (input.sendWindowSeconds ?? SEND_WINDOW_SECONDS) * 1000;
  for (let round = 1; ; round++) {
    for (const terminal of terminals) {
      if (machine.stopReason) return ending(machine.stopReason);
      const sent = await sendThrough(machine, input, terminal, funds, notProcessed);
      if (sent) return sent;
    }
    const left = deadline - Date.now();
    if (machine.stopReason) return ending(machine.stopReason);
    if (left <= 0) return ending('The payout could not be processed.');
    // Nothing the processor took was sent: a stop ends this wait at once (its ending asks about the sends).
    await machine.waiting.backoff(
      Math.min(60_000 * 2 ** (round - 1), 15 * 60_000, left),
      `No payout terminal took the payout (round ${round})`,
      { stoppable: true },
    );
  }
}

/**
 * Closes a payout's sends before it ends without one (a payout sending inside its workflow task): no
 * attempt notes a key after this, and every key noted is asked about, the ones refused in an earlier
 * round too (`ENDING_ASKS_REFUSED_KEYS`). `known`: the first of those the processor knows, which is the
 * payout's outcome; `noted`: whether any key was noted, so funds may be reserved.
 */
export async function endSends(
  machine: TransactionStateMachine,
  input: CardPayoutInput,
  notProcessed: string[] = [],
): Promise<{ known?: Sent; noted: boolean }> {
  // Asked before the close, not in the activation its answer brings (docs/architecture.md, where a patch
  // is asked). Every key known refused was noted, so this is asked exactly when a noted key was known
  // refused.
  const asksRefused = notProcessed.length > 0 && patched(ENDING_ASKS_REFUSED_KEYS);
  const sent = await store.closePayoutSends({ transactionId: input.transactionId });
  const known = await firstKnown(machine, sent, asksRefused ? [] : notProcessed);
  return { ...(known ? { known } : {}), noted: sent.length > 0 };
}

/** One terminal's send; undefined when the processor certainly did not process it. */
async function sendThrough(
  machine: TransactionStateMachine,
  input: CardPayoutInput,
  terminal: TerminalChoice,
  funds: { walletId: string; amountMinor: string },
  notProcessed: string[] | undefined,
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
  const refused = () => {
    if (notProcessed && !notProcessed.includes(payoutKey)) notProcessed.push(payoutKey);
    return undefined;
  };
  const step = `Reserve the funds and send the payout through ${terminal.terminalId} (${terminal.connector})`;
  for (;;) {
    machine.waiting.on('step', step);
    const result = await attempt(() =>
      notProcessed
        ? quickConnector.reserveAndSendPayout.executeWithOptions({ summary: step }, [
            {
              ...request,
              funds,
              inTheTask: {
                notProcessed: [...notProcessed],
                taskStartedAt: taskStartedAt(),
                // Half the run's own task timeout: a retry of this task starts no earlier than that.
                notedWithinMs: workflowInfo().taskTimeoutMs / 2,
              },
            },
          ])
        : connector.reserveAndSendPayout.executeWithOptions({ summary: step }, [{ ...request, funds }]),
    );
    if (result.kind === 'done') {
      const value = result.value;
      if (value.outcome !== 'sentElsewhere') return outcomeOf(value, terminal);
      // A lost attempt of this task sent through another terminal: that send is the payout's, if processed.
      const known = await firstKnown(machine, value.sent, notProcessed!);
      if (known) return known;
      continue;
    }
    if (result.kind === 'failed') return { kind: 'declined', message: result.message };
    if (result.kind === 'notProcessed') return refused();
    // A lost answer: the processor's "not found" counts only once the last attempt's request can no longer
    // land (its deadline has passed), so the payout never goes to another terminal while it may still pay.
    deprecatePatch(NOT_FOUND_AFTER_THE_DEADLINE);
    const known = await askUntilKnown(
      machine,
      terminal.connector,
      () => lookup.lookupPayout({ connector: terminal.connector, payoutKey }),
      { notFoundTrustedFrom: Date.now() + SEND_LANDS_WITHIN_MS },
    );
    if (known.outcome === 'not_found') return refused();
    return outcomeOf(known, terminal);
  }
}

/**
 * Asks about payouts noted as sent that this task does not know of, in the order noted, until one the
 * processor knows: that one is the payout's. Undefined when none was processed (each is then counted in
 * `notProcessed`).
 */
async function firstKnown(
  machine: TransactionStateMachine,
  sent: SentPayout[],
  notProcessed: string[],
): Promise<Sent | undefined> {
  for (const { payoutKey, ...terminal } of sent) {
    if (notProcessed.includes(payoutKey)) continue;
    const known = await askUntilKnown(
      machine,
      terminal.connector,
      () => lookup.lookupPayout({ connector: terminal.connector, payoutKey }),
      { notFoundTrustedFrom: Date.now() + SEND_LANDS_WITHIN_MS },
    );
    if (known.outcome === 'not_found') notProcessed.push(payoutKey);
    else return outcomeOf(known, terminal);
  }
  return undefined;
}

/** Where the processor's answer leaves the payout. */
function outcomeOf(
  known:
    | { outcome: 'declined'; message: string }
    | { outcome: 'paid' | 'verification'; reference: string; settled?: boolean },
  terminal: TerminalChoice,
): Sent {
  if (known.outcome === 'declined') return { kind: 'declined', message: known.message };
  if (known.outcome === 'paid')
    return { kind: 'paid', terminal, settled: 'settled' in known && known.settled === true };
  return { kind: 'verification', terminal, reference: known.reference };
}
