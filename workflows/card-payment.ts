import {
  cardEnteredUpdate,
  connectorKeys,
  failureTypes,
  type CardEntered,
  type CardPaymentInput,
  type FirstAnswer,
  type HostedDecision,
  type Lookup,
} from '../src/contracts';
import { condition, patched, setHandler } from '@temporalio/workflow';
import type { AuthorizeOutcome } from '../activities/cards';
import type { AuthorizeResult } from '../activities/connectors/types';
import type { TerminalChoice } from '../activities/projection';
import { connector, lookup, quickConnector, store } from './activities';
import { attempt, type Outcome } from './failures';
import { TransactionStateMachine } from './state';
import { runTransaction, shielded } from './transaction';
import { askUntilKnown } from './unknown-outcome';

/**
 * Connector calls run as local activities, so the first answer leaves with the first workflow task.
 * Histories from before the change replay with remote ones (README, "Changing a workflow safely").
 */
const LOCAL_CONNECTOR_CALLS = 'card-connector-calls-run-locally';

/** The connector calls of one card payment: local ones, or remote in histories from before. */
type Calls = typeof connector;

/**
 * A card payment: route through the merchant's terminals (a call the acquirer certainly did not process
 * cascades, a decline does not, a lost answer is asked for), then either settle at once or hold a 3DS
 * challenge open for the customer's answer.
 */
export async function cardPayment(input: CardPaymentInput): Promise<FirstAnswer> {
  const machine = new TransactionStateMachine(input.transactionId, 'card');
  return runTransaction(machine, async () => {
    if (input.cardEntryPageUrl && !(await cardEntered(machine, input, input.cardEntryPageUrl))) return;
    const local = patched(LOCAL_CONNECTOR_CALLS);
    const calls: Calls = local ? quickConnector : connector;
    const terminals = await store.listTerminals({
      merchantId: input.merchantId,
      mode: input.mode,
      kind: 'card',
      terminalId: input.terminalId,
    });

    let routed: { terminal: TerminalChoice; authorization: AuthorizeOutcome } | undefined;
    let declined: { terminal: TerminalChoice; message: string } | undefined;
    try {
      for (const [rank, terminal] of terminals.entries()) {
        if (machine.stopReason) {
          const found = local
            ? await findLostAuthorization(machine, input, terminals.slice(rank))
            : undefined;
          if (found?.kind === 'failed') declined = { terminal: found.terminal, message: found.message };
          else if (found) routed = { terminal: found.terminal, authorization: found.value };
          break;
        }
        const result = await authorize(machine, calls, input, terminal, rank);
        if (result.kind === 'notProcessed') continue;
        if (result.kind === 'failed') declined = { terminal, message: result.message };
        else if (result.kind === 'done') routed = { terminal, authorization: result.value };
        break;
      }
    } finally {
      // The card number and CVV are needed by no later step.
      await store.purgeCardData({ transactionId: input.transactionId });
    }

    const placementOf = (terminal: TerminalChoice, authorization?: AuthorizeOutcome) => ({
      terminalId: terminal.terminalId,
      descriptor: terminal.descriptor,
      // What a refund will name at the acquirer (the same for a 3-D Secure challenge and its outcome).
      ...(authorization ? { acquirerReference: authorization.reference } : {}),
    });
    if (declined) {
      await machine.move('FAILED', declined.message, placementOf(declined.terminal));
    } else if (!routed) {
      await machine.move(
        'FAILED',
        machine.stopReason ??
          (terminals.length === 0
            ? 'No terminal is available for this transaction.'
            : 'The payment could not be processed.'),
      );
    } else if (routed.authorization.outcome === 'approved') {
      await machine.move(
        'SUCCESS',
        'Transaction processed successfully.',
        placementOf(routed.terminal, routed.authorization),
      );
    } else {
      await machine.move(
        'REDIRECT',
        'Redirect the customer to redirect_url to complete 3DS authentication.',
        {
          ...placementOf(routed.terminal, routed.authorization),
          // The acquirer's own 3-D Secure page when it has one (it sends the cardholder back to our return
          // URL), else our hosted page.
          redirectUrl: routed.authorization.redirectUrl ?? input.hostedPageUrl,
        },
      );
      const answer = await machine.awaitDecision(
        input.challengeTimeoutSeconds * 1000,
        'Waiting for the 3-D Secure answer',
      );
      if (answer === 'timeout') {
        await machine.move('FAILED', 'Transaction abandoned.');
      } else if (answer === 'stopped') {
        await machine.move('FAILED', machine.stopReason!);
      } else {
        const completed = await completeChallenge(machine, calls, input, routed, answer);
        if (completed === 'approved') await machine.move('SUCCESS', 'Transaction processed successfully.');
        else await machine.move('FAILED', completed.declined);
      }
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
  setHandler(
    cardEnteredUpdate,
    shielded(async (_entered: CardEntered) => {
      entered = true;
      return machine.nextSnapshot();
    }),
    {
      description: 'Internal: the hosted payment page has vaulted the card the customer typed.',
      validator: (_entered: CardEntered) => {
        if (!waiting || entered) throw new Error('This transaction awaits no card.');
      },
    },
  );
  await machine.move('REDIRECT', 'Redirect the customer to redirect_url to enter the card.', {
    redirectUrl: pageUrl,
  });
  const timeoutMs = input.challengeTimeoutSeconds * 1000;
  waiting = true;
  machine.waiting.on('customer', 'Waiting for the card on the hosted payment page', Date.now() + timeoutMs);
  await condition(() => entered || machine.stopReason !== undefined, timeoutMs, {
    summary: 'Waiting for the card on the hosted payment page',
  });
  waiting = false;
  if (entered) return true;
  await store.purgeCardData({ transactionId: input.transactionId });
  await machine.move('FAILED', machine.stopReason ?? 'Transaction abandoned.', { redirectUrl: null });
  return false;
}

/** One terminal's authorization; a lost answer is asked for until the acquirer knows. */
async function authorize(
  machine: TransactionStateMachine,
  calls: Calls,
  input: CardPaymentInput,
  terminal: TerminalChoice,
  rank: number,
): Promise<Outcome<AuthorizeOutcome>> {
  const authorizationKey = connectorKeys.authorization(input.transactionId, terminal.terminalId);
  const step = `Authorize with ${terminal.terminalId} (${terminal.connector})`;
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
      },
    ]),
  );
  if (result.kind !== 'unknown') return result;
  return learn(
    await askUntilKnown(machine, terminal.connector, () =>
      lookup.lookupAuthorization({
        connector: terminal.connector,
        terminalId: terminal.terminalId,
        authorizationKey,
      }),
    ),
  );
}

/** What a connector's answer about an authorization means for the routing. */
function learn(known: Exclude<Lookup<AuthorizeResult>, { outcome: 'pending' }>): Outcome<AuthorizeOutcome> {
  if (known.outcome === 'not_found') return { kind: 'notProcessed' };
  if (known.outcome === 'declined')
    return { kind: 'failed', message: known.message, type: failureTypes.declined };
  return { kind: 'done', value: known };
}

/**
 * A stop request met before an authorization. With local connector calls, an attempt of this workflow task
 * that was lost (a worker crash) may have authorized at these terminals before the request arrived, though
 * this history shows no call: each is asked in routing order, as the lost attempt would have called it,
 * until one knows the payment. Nothing known is the common case: the stop came first.
 */
async function findLostAuthorization(
  machine: TransactionStateMachine,
  input: CardPaymentInput,
  terminals: TerminalChoice[],
): Promise<(Outcome<AuthorizeOutcome> & { kind: 'done' | 'failed'; terminal: TerminalChoice }) | undefined> {
  for (const terminal of terminals) {
    const request = {
      connector: terminal.connector,
      terminalId: terminal.terminalId,
      authorizationKey: connectorKeys.authorization(input.transactionId, terminal.terminalId),
    };
    const first = await attempt(() => lookup.lookupAuthorization(request));
    const known =
      first.kind === 'done' && first.value.outcome !== 'pending'
        ? first.value
        : await askUntilKnown(machine, terminal.connector, () => lookup.lookupAuthorization(request));
    const outcome = learn(known);
    if (outcome.kind === 'done' || outcome.kind === 'failed') return { ...outcome, terminal };
  }
  return undefined;
}

/**
 * Sends the customer's 3DS answer to the acquirer until the authorization shows its result: when the
 * answer is lost or refused, the authorization is looked up, and sent again while it still awaits it.
 */
async function completeChallenge(
  machine: TransactionStateMachine,
  calls: Calls,
  input: CardPaymentInput,
  routed: { terminal: TerminalChoice; authorization: AuthorizeOutcome },
  decision: HostedDecision,
): Promise<'approved' | { declined: string }> {
  const authorizationKey = connectorKeys.authorization(input.transactionId, routed.terminal.terminalId);
  const request = {
    connector: routed.terminal.connector,
    terminalId: routed.terminal.terminalId,
    authorizationKey,
    reference: routed.authorization.reference,
  };
  const step = `Send the 3-D Secure answer (${decision}) to ${request.connector}`;
  for (let round = 0; ; round++) {
    machine.waiting.on('step', step);
    const result = await attempt(() =>
      calls.completeChallenge.executeWithOptions({ summary: step }, [{ ...request, decision }]),
    );
    if (result.kind === 'done') return 'approved';
    if (result.kind === 'failed') return { declined: result.message };
    const known = await askUntilKnown(machine, request.connector, () => lookup.lookupAuthorization(request));
    if (known.outcome === 'approved') return 'approved';
    if (known.outcome === 'declined') return { declined: known.message };
    if (known.outcome === 'not_found') return { declined: 'The payment could not be processed.' };
    await machine.waiting.backoff(
      Math.min(5_000 * 2 ** round, 10 * 60_000),
      `${request.connector} has not taken the 3-D Secure answer (round ${round + 1})`,
    );
  }
}
