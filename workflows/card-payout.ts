import { deprecatePatch, patched } from '@temporalio/workflow';
import { connectorKeys, type CardPayoutInput, type FirstAnswer, type HostedDecision } from '../src/contracts';
import type { TerminalChoice } from '../activities/projection';
import { attempt } from './failures';
import { connector, ledger, lookup, store } from './activities';
import { TransactionStateMachine } from './state';
import { runTransaction } from './transaction';
import { askUntilKnown } from './unknown-outcome';
import { endSends, send, type Sent } from './payout-send';

/** Test mode pays out at most this many minor units; above it the sandbox answers "Insufficient funds." */
const TEST_MODE_LIMIT = 1000n;

/**
 * Reserve, send and settle in one step. Deprecated: histories from before it (which took three) can
 * no longer be open (docs/architecture.md, retiring a patch).
 */
const PAYOUT_IN_ONE_STEP = 'payout-reserve-send-settle-in-one-step';

/**
 * The wallet and the terminals read in one local step, and the card purged by the final move's projection:
 * each local step is a round trip between the workflow and the worker inside the task that answers the
 * merchant. Deprecated: histories from before it (which read them apart and purged in a step of its own)
 * can no longer be open (docs/architecture.md, retiring a patch).
 */
const FEWER_LOCAL_STEPS = 'payout-fewer-local-steps';

/**
 * The send runs inside the workflow task that reads the wallet (a local activity), so a payout answers from
 * its first task instead of waiting on an activity task and a second workflow task. Safe only with its
 * fence: each send notes its key before anything else and a stop closes the sends
 * (`workflows/payout-send.ts`). Histories from before sent in a remote activity of its own.
 */
const SENT_IN_THE_TASK = 'payout-sent-in-the-task';

/**
 * The same choice as `SENT_IN_THE_TASK`, asked first thing in the workflow instead of after the binding
 * step. A query can make the server cut the first task after the binding's local activity; a patch first
 * asked there is not known on replay, which then fails (docs/architecture.md, "Where a patch is asked").
 * Asked here, its marker is the first command of the first task whatever the cut.
 */
const SEND_CHOSEN_AT_START = 'payout-send-chosen-at-start';

/**
 * A card payout as a saga: check, reserve the amount in the wallet, send it through the merchant's payout
 * terminals, and settle once the processor has paid; on the common path the reserve, the send and the
 * settle are one step (`reserveAndSendPayout`), run inside the first workflow task. Every failure after
 * the reserve runs the compensations in reverse, so the wallet ends where it started. Only a processor's
 * definite answer moves money: a lost answer is asked for until known, and only a send the processor
 * certainly did not process cascades.
 */
export async function cardPayout(input: CardPayoutInput): Promise<FirstAnswer> {
  const chosenAtStart = patched(SEND_CHOSEN_AT_START);
  const machine = new TransactionStateMachine(input, 'payout');
  const compensations: (() => Promise<void>)[] = [];
  const fail = async (message: string) => {
    for (const undo of compensations.reverse()) await undo();
    await machine.move('FAILED', message, { redirectUrl: null });
  };
  // The wallet gives the amount and the merchant's fee together.
  const funds = {
    walletId: input.walletId,
    transactionId: input.transactionId,
    amountMinor: (BigInt(input.amountMinor) + BigInt(input.feeMinor ?? '0')).toString(),
  };
  const paid = async (terminal?: TerminalChoice, settled = false) => {
    if (!settled) await ledger.settleFunds(funds);
    await machine.move('SUCCESS', 'Transaction processed successfully.', {
      ...(terminal ? { terminalId: terminal.terminalId } : {}),
      redirectUrl: null,
    });
  };

  return runTransaction(machine, async () => {
    try {
      deprecatePatch(FEWER_LOCAL_STEPS);
      machine.purgeCardWhenFinal = true;
      // Runs from before `SEND_CHOSEN_AT_START` ask here, where they asked.
      const inTheTask = chosenAtStart || patched(SENT_IN_THE_TASK);
      const { wallet, terminals } = await store.payoutSetup({
        walletId: input.walletId,
        merchantId: input.merchantId,
        mode: input.mode,
        terminalId: input.terminalId,
      });
      if (wallet.currency !== input.currency) {
        await machine.move('BLOCKED', "Currency must match the wallet's currency");
        return;
      }
      // Releasing is a no-op without a reserve, so the undo is registered before the reserve is tried.
      const release = () => ledger.releaseFunds(funds);
      let outcome: Sent;
      if (wallet.status !== 'Active') {
        // Sending inside the task, a lost attempt of it may have sent while the wallet was active: what it
        // sent stands, and nothing more is sent (`workflows/payout-send.ts`).
        const ended = inTheTask ? await endSends(machine, input) : { noted: false };
        if (!ended.known) {
          if (ended.noted) await release();
          await machine.move('BLOCKED', 'The wallet is inactive.');
          return;
        }
        compensations.push(release);
        outcome = ended.known;
      } else {
        if (input.mode === 'test' && BigInt(input.amountMinor) > TEST_MODE_LIMIT) {
          await fail('Insufficient funds.');
          return;
        }
        compensations.push(release);
        deprecatePatch(PAYOUT_IN_ONE_STEP);
        // Each terminal's send reserves the funds first (a no-op after the first).
        outcome = await send(
          machine,
          input,
          { walletId: funds.walletId, amountMinor: funds.amountMinor },
          terminals,
          inTheTask,
        );
      }
      if (outcome.kind === 'declined') {
        await fail(outcome.message);
      } else if (outcome.kind === 'paid') {
        await paid(outcome.terminal, outcome.settled);
      } else {
        await machine.move(
          'PENDING',
          'Additional verification is required: redirect the user to redirect_url.',
          {
            terminalId: outcome.terminal.terminalId,
            redirectUrl: input.hostedPageUrl,
          },
        );
        const answer = await machine.awaitDecision(
          input.verificationTimeoutSeconds * 1000,
          'Waiting for the cardholder to verify the payout',
        );
        // Unanswered or stopped, the payout is withdrawn at the processor before the funds come back.
        const decision: HostedDecision = answer === 'approve' ? 'approve' : 'decline';
        const confirmed = await confirm(machine, input, outcome, decision);
        if (confirmed === 'paid') await paid();
        else if (answer === 'timeout') await fail('Payout verification expired.');
        else if (answer === 'stopped') await fail(machine.stopReason!);
        else await fail(confirmed.declined);
      }
    } finally {
      if (!machine.cardPurged) await store.purgeCardData({ transactionId: input.transactionId });
    }
  });
}

/**
 * Sends the cardholder's verification answer to the processor until the payout shows its result: when
 * the answer is lost or refused, the payout is looked up, and the answer sent again while it still waits.
 */
async function confirm(
  machine: TransactionStateMachine,
  input: CardPayoutInput,
  sent: { terminal: TerminalChoice; reference: string },
  decision: HostedDecision,
): Promise<'paid' | { declined: string }> {
  const request = {
    connector: sent.terminal.connector,
    payoutKey: connectorKeys.payout(input.transactionId, sent.terminal.terminalId),
    reference: sent.reference,
  };
  const step = `Send the verification answer (${decision}) to ${request.connector}`;
  for (let round = 0; ; round++) {
    machine.waiting.on('step', step);
    const result = await attempt(() =>
      connector.confirmPayout.executeWithOptions({ summary: step }, [{ ...request, decision }]),
    );
    if (result.kind === 'done' && result.value.outcome === 'paid') return 'paid';
    if (result.kind === 'failed') return { declined: result.message };
    const known = await askUntilKnown(machine, request.connector, () => lookup.lookupPayout(request));
    if (known.outcome === 'paid') return 'paid';
    if (known.outcome === 'declined') return { declined: known.message };
    if (known.outcome === 'not_found') return { declined: 'The payout could not be processed.' };
    await machine.waiting.backoff(
      Math.min(5_000 * 2 ** round, 10 * 60_000),
      `${request.connector} has not taken the verification answer (round ${round + 1})`,
    );
  }
}
