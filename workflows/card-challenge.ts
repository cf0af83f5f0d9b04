/** A card payment's 3-D Secure challenge: waiting for the answer, sending it, and closing it at the acquirer. */
import { connectorKeys, type CardPaymentInput, type HostedDecision } from '../src/contracts';
import type { AuthorizeOutcome } from '../activities/cards';
import type { TerminalChoice } from '../activities/projection';
import { lookup, type quickConnector } from './activities';
import { attempt } from './failures';
import type { TransactionStateMachine } from './state';
import { ask } from './unknown-outcome';

/** The connector calls of one card payment. */
export type Calls = typeof quickConnector;

/** What ends a 3-D Secure challenge. */
export type ChallengeEnd = 'approved' | { declined: string };

/**
 * The 3-D Secure challenge, until the acquirer settles it or its time runs out. The customer answers on
 * our checkout page (the answer is sent to the acquirer until it lands) or on the acquirer's own page,
 * whence a return to our URL only makes the workflow ask the acquirer: an early or forged visit finds the
 * challenge still open and the wait goes on. Unanswered in time, or stopped by ops, the challenge is asked
 * about and closed at the acquirer before the payment fails: a cardholder who finished at the acquirer
 * meanwhile has paid, and the payment settles.
 */
export async function challenge(
  machine: TransactionStateMachine,
  calls: Calls,
  input: CardPaymentInput,
  routed: { terminal: TerminalChoice; authorization: AuthorizeOutcome },
): Promise<ChallengeEnd> {
  const request = {
    connector: routed.terminal.connector,
    terminalId: routed.terminal.terminalId,
    authorizationKey: connectorKeys.authorization(input.transactionId, routed.terminal.terminalId),
    reference: routed.authorization.reference,
  };
  const onAcquirerPage =
    routed.authorization.outcome === 'challenge' && routed.authorization.redirectUrl !== undefined;
  const deadline = Date.now() + input.challengeTimeoutSeconds * 1000;
  for (;;) {
    const left = deadline - Date.now();
    const answer =
      left > 0 ? await machine.awaitDecision(left, 'Waiting for the 3-D Secure answer') : 'timeout';
    if (answer === 'timeout' || answer === 'stopped') break;
    // The acquirer's page decides there; what comes back to us is only the cardholder's return.
    const decision: HostedDecision = onAcquirerPage ? 'approve' : answer;
    for (let round = 0; ; round++) {
      const heard = await answerChallenge(machine, calls, request, decision, onAcquirerPage);
      if (heard !== 'open') return heard;
      if (onAcquirerPage || Date.now() >= deadline) break;
      await machine.waiting.backoff(
        Math.min(5_000 * 2 ** round, 10 * 60_000, deadline - Date.now()),
        `${request.connector} has not taken the 3-D Secure answer (round ${round + 1})`,
      );
    }
  }
  return closeChallenge(machine, request, machine.stopReason ?? 'Transaction abandoned.');
}

/** Sends the customer's answer (or, after the acquirer's own page, asks for it): open while unfinished. */
async function answerChallenge(
  machine: TransactionStateMachine,
  calls: Calls,
  request: { connector: string; terminalId: string; authorizationKey: string; reference: string },
  decision: HostedDecision,
  onAcquirerPage: boolean,
): Promise<ChallengeEnd | 'open'> {
  const step = onAcquirerPage
    ? `Ask ${request.connector} for the 3-D Secure result`
    : `Send the 3-D Secure answer (${decision}) to ${request.connector}`;
  machine.waiting.on('step', step);
  const result = await attempt(() =>
    calls.completeChallenge.executeWithOptions({ summary: step }, [{ ...request, decision }]),
  );
  if (result.kind === 'done') return result.value.outcome === 'approved' ? 'approved' : 'open';
  if (result.kind === 'failed') return { declined: result.message };
  // The acquirer's page is not finished: the cardholder may still finish it before the deadline.
  if (result.kind === 'notProcessed' && onAcquirerPage) return 'open';
  const known = await ask(machine, request.connector, () => lookup.lookupAuthorization(request));
  if (known.outcome === 'approved') return 'approved';
  if (known.outcome === 'declined') return { declined: known.message };
  if (known.outcome === 'not_found') return { declined: 'The payment could not be processed.' };
  return 'open';
}

/**
 * Ends a challenge nobody answered in time (or that ops stopped): the acquirer is asked where it stands,
 * and a challenge still open is closed there, so the cardholder can no longer complete it. One the
 * cardholder completed first settles; anything else fails with `why`.
 */
async function closeChallenge(
  machine: TransactionStateMachine,
  request: { connector: string; terminalId: string; authorizationKey: string; reference: string },
  why: string,
): Promise<ChallengeEnd> {
  for (let round = 0; ; round++) {
    const known = await ask(machine, request.connector, () => lookup.lookupAuthorization(request));
    if (known.outcome === 'approved') return 'approved';
    if (known.outcome === 'declined') return { declined: known.message };
    if (known.outcome === 'not_found') return { declined: why };
    const step = `Close the 3-D Secure challenge at ${request.connector}`;
    machine.waiting.on('step', step);
    const closed = await attempt(() =>
      lookup.cancelAuthorization.executeWithOptions({ summary: step }, [request]),
    );
    if (closed.kind === 'done' && closed.value.outcome === 'approved') return 'approved';
    if (closed.kind === 'done' && closed.value.outcome === 'declined') return { declined: why };
    await machine.waiting.backoff(
      Math.min(5_000 * 2 ** round, 10 * 60_000),
      `${request.connector} has not closed the 3-D Secure challenge (round ${round + 1})`,
    );
  }
}
