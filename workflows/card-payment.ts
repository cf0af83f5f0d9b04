/** The card payment workflow: routing through the merchant's terminals (its 3-D Secure challenge: card-challenge.ts). */
import {
  SEND_LANDS_WITHIN_MS,
  cardEnteredUpdate,
  connectorKeys,
  failureTypes,
  type CardEntered,
  type CardPaymentInput,
  type FirstAnswer,
  type Lookup,
} from '../src/contracts';
import { condition, patched, workflowInfo } from '@temporalio/workflow';
import { setInternalHandler } from './proofs';
import type { AuthorizeOutcome, SentAuthorization } from '../activities/cards';
import type { AuthorizeResult } from '../activities/connectors/types';
import type { TerminalChoice } from '../activities/projection';
import { lookup, quickConnector, store } from './activities';
import { attempt, refusal, type Outcome } from './failures';
import { TransactionStateMachine } from './state';
import { runTransaction } from './transaction';
import { ask, askUntilKnown } from './unknown-outcome';
import { challenge, type Calls } from './card-challenge';
import { taskStartedAt } from './task-clock';

/**
 * Two local activities fewer (one patch, as each costs a marker and a search-attribute upsert): a card
 * payment typed into the merchant's own form learns its terminals in its first step, the one that binds
 * its run to the service's record (activities/index.ts), and the move its routing leads to (final, or the
 * 3-D Secure REDIRECT) purges the card in its projection write. Histories from before list the terminals
 * and purge the card in local activities of their own.
 */
const FEWER_LOCAL_STEPS = 'card-fewer-local-steps';

/**
 * A card authorization fenced as a payout's send (workflows/payout-send.ts): its key noted within half the
 * task timeout of its task's start and its request's deadline counted from that start; an attempt that ran
 * late (sent nothing) is made again in a fresh workflow task; the acquirer's "not found" about a key that
 * may have been sent is trusted only once that send can no longer land; and a payment that ends with no
 * authorization the acquirer took first closes its authorizations and asks about what was noted. Each adds
 * commands only on the paths it changes (a late attempt, a lost answer, an ending without one), so the
 * patch is asked there, and a payment the acquirer answers at once carries no marker.
 */
const FENCED = 'card-authorization-fenced';

/** How long an authorization that keeps running late is tried again before the payment gives up on it. */
const LATE_WINDOW_MS = 5 * 60_000;

/** An authorization the acquirer has answered, and the terminal that answered it. */
type Routed = { terminal: TerminalChoice } & (
  { kind: 'done'; value: AuthorizeOutcome } | { kind: 'failed'; message: string }
);

/**
 * A card payment: route through the merchant's terminals (a call the acquirer certainly did not process
 * cascades, a decline does not, a lost answer is asked for), then either settle at once or hold a 3DS
 * challenge open for the customer's answer.
 */
export async function cardPayment(input: CardPaymentInput): Promise<FirstAnswer> {
  const terminalQuery = {
    merchantId: input.merchantId,
    mode: input.mode,
    kind: 'card' as const,
    terminalId: input.terminalId,
  };
  const fewerSteps = patched(FEWER_LOCAL_STEPS);
  // A hosted payment lists them once the customer has typed the card, however long that took.
  const listedWithTheBinding = fewerSteps && !input.cardEntryPageUrl;
  const machine = new TransactionStateMachine(
    input,
    'card',
    listedWithTheBinding ? { terminals: terminalQuery } : undefined,
  );
  return runTransaction(machine, async () => {
    if (input.cardEntryPageUrl && !(await cardEntered(machine, input, input.cardEntryPageUrl))) return;
    const calls: Calls = quickConnector;
    const terminals = machine.proofs.firstStep.terminals ?? (await store.listTerminals(terminalQuery));

    let routed: Routed | undefined;
    // Authorizations this payment sent that the acquirer certainly did not process (a cascade's refusals).
    const notProcessed: string[] = [];
    try {
      for (const [rank, terminal] of terminals.entries()) {
        if (machine.stopReason) {
          if (patched(FENCED)) break;
          routed = await firstKnown(
            machine,
            await store.sentAuthorizations({ transactionId: input.transactionId }),
          );
          break;
        }
        const result = await authorize(machine, calls, input, terminal, rank, notProcessed);
        if (result.kind === 'notProcessed') continue;
        if (result.kind === 'late') break;
        routed = result;
        break;
      }
      // No authorization the acquirer took (stopped, no terminal, every one refused): what a lost attempt
      // of this task noted that this one does not know of is asked about, after no more can be noted.
      if (!routed && patched(FENCED)) routed = await endAuthorizations(machine, input, notProcessed);
    } catch (error) {
      // The card number and CVV are needed by no later step, and no move may follow.
      await store.purgeCardData({ transactionId: input.transactionId });
      throw error;
    }
    // The card number and CVV are needed by no later step: the move the routing leads to removes them in
    // its own projection write (a step fewer than purging on their own, as histories from before did).
    if (fewerSteps) machine.purgeCardWithNextMove = true;
    else await store.purgeCardData({ transactionId: input.transactionId });

    const placementOf = (terminal: TerminalChoice, authorization?: AuthorizeOutcome) => ({
      terminalId: terminal.terminalId,
      descriptor: terminal.descriptor,
      // What a refund will name at the acquirer (the same for a 3-D Secure challenge and its outcome).
      ...(authorization ? { acquirerReference: authorization.reference } : {}),
    });
    if (routed?.kind === 'failed') {
      await machine.move('FAILED', routed.message, placementOf(routed.terminal));
    } else if (!routed) {
      await machine.move(
        'FAILED',
        machine.stopReason ??
          (terminals.length === 0
            ? 'No terminal is available for this transaction.'
            : 'The payment could not be processed.'),
      );
    } else if (routed.value.outcome === 'approved') {
      await machine.move(
        'SUCCESS',
        'Transaction processed successfully.',
        placementOf(routed.terminal, routed.value),
      );
    } else {
      const challenged = { terminal: routed.terminal, authorization: routed.value };
      await machine.move(
        'REDIRECT',
        'Redirect the customer to redirect_url to complete 3DS authentication.',
        {
          ...placementOf(routed.terminal, routed.value),
          // The acquirer's own 3-D Secure page when it has one (it sends the cardholder back to our return
          // URL), else our hosted page.
          redirectUrl: routed.value.redirectUrl ?? input.hostedPageUrl,
        },
      );
      const ended = await challenge(machine, calls, input, challenged);
      if (ended === 'approved') await machine.move('SUCCESS', 'Transaction processed successfully.');
      else await machine.move('FAILED', ended.declined);
    }
  });
}

/**
 * A hosted card payment's first step: the customer is sent to our payment page and the workflow waits, as
 * long as for a 3DS challenge, for the card typed there. The page has put the number and CVV in the vault
 * before it tells the workflow; the update carries only what the workflow may see, and answers with the
 * state routing leads to. False when the transaction ended instead (abandoned, or stopped by ops).
 */
async function cardEntered(
  machine: TransactionStateMachine,
  input: CardPaymentInput,
  pageUrl: string,
): Promise<boolean> {
  let entered = false;
  let waiting = false;
  setInternalHandler(
    machine.proofs,
    cardEnteredUpdate,
    async (_entered: CardEntered) => {
      entered = true;
      return machine.nextMove();
    },
    {
      description: 'the hosted payment page has vaulted the card the customer typed.',
      validator: () => {
        if (!waiting || entered) throw refusal('This transaction awaits no card.');
      },
    },
  );
  await machine.move('REDIRECT', 'Redirect the customer to redirect_url to enter the card.', {
    redirectUrl: pageUrl,
  });
  const timeoutMs = input.challengeTimeoutSeconds * 1000;
  waiting = true;
  machine.waiting.on('customer', 'Waiting for the card on the hosted payment page', Date.now() + timeoutMs);
  await condition(() => entered || machine.stopReason !== undefined || machine.customerTimeIsUp, timeoutMs, {
    summary: 'Waiting for the card on the hosted payment page',
  });
  waiting = false;
  if (entered) return true;
  await store.purgeCardData({ transactionId: input.transactionId });
  await machine.move('FAILED', machine.stopReason ?? 'Transaction abandoned.', { redirectUrl: null });
  return false;
}

/**
 * One terminal's authorization; a lost answer is asked for until the acquirer knows. When an earlier
 * attempt of this task sent the card through other terminals (a lost task whose retry routes again), those
 * are asked about first, and the first the acquirer knows is the routing: a card is never sent to a second
 * terminal while the first may have charged it.
 */
async function authorize(
  machine: TransactionStateMachine,
  calls: Calls,
  input: CardPaymentInput,
  terminal: TerminalChoice,
  rank: number,
  notProcessed: string[],
): Promise<Routed | { kind: 'notProcessed' } | { kind: 'late' }> {
  const authorizationKey = connectorKeys.authorization(input.transactionId, terminal.terminalId);
  const step = `Authorize with ${terminal.terminalId} (${terminal.connector})`;
  let lateSince: number | undefined;
  for (let lateRound = 1; ;) {
    machine.waiting.on('step', step);
    const result = await attempt(() =>
      calls.authorizeCard.executeWithOptions({ summary: step }, [
        {
          transactionId: input.transactionId,
          authorizationKey,
          mode: input.mode,
          connector: terminal.connector,
          terminalId: terminal.terminalId,
          terminalRank: rank,
          amountMinor: input.amountMinor,
          currency: input.currency,
          ...(notProcessed.length > 0 ? { notProcessed } : {}),
          inTheTask: {
            taskStartedAt: taskStartedAt(),
            // Half the run's own task timeout: a retry of this task starts no earlier than that.
            notedWithinMs: workflowInfo().taskTimeoutMs / 2,
          },
        },
      ]),
    );
    if (result.kind === 'late' && patched(FENCED)) {
      // This attempt went no further than its note (a slow database, a stalled worker); an earlier attempt
      // of the same step may have sent the key, which the next attempt then finds noted before, so no
      // refusal of it is definite. It is made again in a fresh workflow task, whose start the next
      // attempt's bounds count from. Late for longer than the window (a worker's clock ahead of the
      // server's, a database that slow), or stopped meanwhile, the routing ends: what was noted is asked
      // about before the payment ends.
      lateSince ??= Date.now();
      if (Date.now() - lateSince >= LATE_WINDOW_MS) return { kind: 'late' };
      await machine.waiting.backoff(
        Math.min(1_000 * 2 ** (lateRound - 1), 30_000),
        `The authorization through ${terminal.terminalId} ran late (round ${lateRound})`,
        { stoppable: true },
      );
      lateRound++;
      if (machine.stopReason) return { kind: 'late' };
      continue;
    }
    if (result.kind === 'done') {
      const value = result.value;
      if (value.outcome !== 'sentElsewhere') return { kind: 'done', value, terminal };
      const known = await firstKnown(machine, value.sent);
      if (known) return known;
      notProcessed.push(...value.sent.map((sent) => sent.authorizationKey));
      continue;
    }
    if (result.kind === 'failed') return { ...result, terminal };
    if (result.kind === 'notProcessed') {
      notProcessed.push(authorizationKey);
      return result;
    }
    // A lost answer: the acquirer's "not found" counts only once this attempt's request can no longer land
    // (its deadline has passed), so the card never goes to another terminal while this one may charge it.
    const known = learn(
      await askUntilKnown(
        machine,
        terminal.connector,
        () =>
          lookup.lookupAuthorization({
            connector: terminal.connector,
            terminalId: terminal.terminalId,
            authorizationKey,
          }),
        untilItCannotLand(),
      ),
    );
    if (known.kind !== 'notProcessed') return { ...known, terminal };
    notProcessed.push(authorizationKey);
    return known;
  }
}

/**
 * Asks about authorizations this payment sent, in the order sent, until one the acquirer knows: that one
 * is the routing. Undefined when none was processed.
 */
async function firstKnown(
  machine: TransactionStateMachine,
  sent: SentAuthorization[],
): Promise<Routed | undefined> {
  // Noted by another attempt (a lost task's), whose request may still be on its way: each is trusted from
  // the same point.
  const trusted = sent.length > 0 ? untilItCannotLand() : {};
  for (const { authorizationKey, ...terminal } of sent) {
    const known = learn(
      await ask(
        machine,
        terminal.connector,
        () => lookup.lookupAuthorization({ ...terminal, authorizationKey }),
        trusted,
      ),
    );
    if (known.kind === 'done' || known.kind === 'failed') return { ...known, terminal };
  }
  return undefined;
}

/**
 * When a "not found" about a key sent from a task that started no later than this one may be trusted:
 * once its request's deadline (`SEND_DEADLINE_MS` from that task's start) and a margin for clocks have
 * passed. At once in histories from before the fence.
 */
function untilItCannotLand(): { notFoundTrustedFrom?: number } {
  return patched(FENCED) ? { notFoundTrustedFrom: Date.now() + SEND_LANDS_WITHIN_MS } : {};
}

/**
 * Closes the payment's authorizations (no attempt notes a key after this) and asks about each noted that
 * this task does not know was refused (`notProcessed`), in the order noted: the first the acquirer knows is
 * the payment's. Undefined when none was processed.
 */
async function endAuthorizations(
  machine: TransactionStateMachine,
  input: CardPaymentInput,
  notProcessed: string[],
): Promise<Routed | undefined> {
  const sent = await store.closeAuthorizations({ transactionId: input.transactionId });
  return firstKnown(
    machine,
    sent.filter((one) => !notProcessed.includes(one.authorizationKey)),
  );
}

/** What a connector's answer about an authorization means for the routing. */
function learn(
  known: Exclude<Lookup<AuthorizeResult>, { outcome: 'pending' }>,
): Exclude<Outcome<AuthorizeOutcome>, { kind: 'unknown' | 'late' }> {
  if (known.outcome === 'not_found') return { kind: 'notProcessed' };
  if (known.outcome === 'declined')
    return { kind: 'failed', message: known.message, type: failureTypes.declined };
  return { kind: 'done', value: known };
}
