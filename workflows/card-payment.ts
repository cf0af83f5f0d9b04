import {
  connectorKeys,
  failureTypes,
  type CardPaymentInput,
  type FirstAnswer,
  type HostedDecision,
} from '../src/contracts';
import type { AuthorizeOutcome } from '../activities/cards';
import type { TerminalChoice } from '../activities/projection';
import { connector, lookup, store } from './activities';
import { attempt, type Outcome } from './failures';
import { TransactionStateMachine } from './state';
import { runTransaction } from './transaction';
import { askUntilKnown } from './unknown-outcome';

/**
 * A card payment: route through the merchant's terminals (a call the acquirer certainly did not process
 * cascades, a decline does not, a lost answer is asked for), then either settle at once or hold a 3DS
 * challenge open for the customer's answer.
 */
export async function cardPayment(input: CardPaymentInput): Promise<FirstAnswer> {
  const machine = new TransactionStateMachine(input.transactionId, 'card');
  return runTransaction(machine, async () => {
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
        if (machine.stopReason) break;
        const result = await authorize(machine, input, terminal, rank);
        if (result.kind === 'notProcessed') continue;
        if (result.kind === 'failed') declined = { terminal, message: result.message };
        else if (result.kind === 'done') routed = { terminal, authorization: result.value };
        break;
      }
    } finally {
      // The card number and CVV are needed by no later step.
      await store.purgeCardData({ transactionId: input.transactionId });
    }

    const placementOf = (terminal: TerminalChoice) => ({
      terminalId: terminal.terminalId,
      descriptor: terminal.descriptor,
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
      await machine.move('SUCCESS', 'Transaction processed successfully.', placementOf(routed.terminal));
    } else {
      await machine.move(
        'REDIRECT',
        'Redirect the customer to redirect_url to complete 3DS authentication.',
        {
          ...placementOf(routed.terminal),
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
        const completed = await completeChallenge(machine, input, routed, answer);
        if (completed === 'approved') await machine.move('SUCCESS', 'Transaction processed successfully.');
        else await machine.move('FAILED', completed.declined);
      }
    }
  });
}

/** One terminal's authorization; a lost answer is asked for until the acquirer knows. */
async function authorize(
  machine: TransactionStateMachine,
  input: CardPaymentInput,
  terminal: TerminalChoice,
  rank: number,
): Promise<Outcome<AuthorizeOutcome>> {
  const authorizationKey = connectorKeys.authorization(input.transactionId, terminal.terminalId);
  const step = `Authorize with ${terminal.terminalId} (${terminal.connector})`;
  machine.waiting.on('step', step);
  const result = await attempt(() =>
    connector.authorizeCard.executeWithOptions({ summary: step }, [
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
  const known = await askUntilKnown(machine, terminal.connector, () =>
    lookup.lookupAuthorization({
      connector: terminal.connector,
      terminalId: terminal.terminalId,
      authorizationKey,
    }),
  );
  if (known.outcome === 'not_found') return { kind: 'notProcessed' };
  if (known.outcome === 'declined')
    return { kind: 'failed', message: known.message, type: failureTypes.declined };
  return { kind: 'done', value: known };
}

/**
 * Sends the customer's 3DS answer to the acquirer until the authorization shows its result: when the
 * answer is lost or refused, the authorization is looked up, and sent again while it still awaits it.
 */
async function completeChallenge(
  machine: TransactionStateMachine,
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
      connector.completeChallenge.executeWithOptions({ summary: step }, [{ ...request, decision }]),
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
