import type { CardPaymentInput, FirstAnswer } from '../src/temporal/contracts';
import { connector, store } from './activities';
import { attempt } from './failures';
import { TransactionStateMachine } from './state';

/**
 * A card payment: route through the merchant's terminals (technical failures cascade, declines do not),
 * then either settle at once or hold a 3DS challenge open for the customer's answer.
 */
export async function cardPayment(input: CardPaymentInput): Promise<FirstAnswer> {
  const machine = new TransactionStateMachine(input.transactionId, 'card');
  const terminals = await store.listTerminals({
    merchantId: input.merchantId,
    mode: input.mode,
    kind: 'card',
    terminalId: input.terminalId,
  });

  type Terminal = (typeof terminals)[number];
  let routed: { terminal: Terminal; outcome: 'approved' | 'challenge' } | undefined;
  let declined: { terminal: Terminal; message: string } | undefined;
  try {
    for (const [rank, terminal] of terminals.entries()) {
      const result = await attempt(() =>
        connector.authorizeCard({
          transactionId: input.transactionId,
          mode: input.mode,
          connector: terminal.connector,
          terminalRank: rank,
          amountMinor: input.amountMinor,
          currency: input.currency,
        }),
      );
      if (result.kind === 'technical') continue;
      if (result.kind === 'failed') declined = { terminal, message: result.message };
      else routed = { terminal, outcome: result.value.outcome };
      break;
    }
  } finally {
    // The card number and CVV are needed by no later step.
    await store.purgeCardData({ transactionId: input.transactionId });
  }

  const placementOf = (terminal: Terminal) => ({
    terminalId: terminal.terminalId,
    descriptor: terminal.descriptor,
  });
  if (declined) {
    await machine.move('FAILED', declined.message, placementOf(declined.terminal));
  } else if (!routed) {
    await machine.move(
      'FAILED',
      terminals.length === 0
        ? 'No terminal is available for this transaction.'
        : 'The payment could not be processed.',
    );
  } else if (routed.outcome === 'approved') {
    await machine.move('SUCCESS', 'Transaction processed successfully.', placementOf(routed.terminal));
  } else {
    await machine.move('REDIRECT', 'Redirect the customer to redirect_url to complete 3DS authentication.', {
      ...placementOf(routed.terminal),
      redirectUrl: input.hostedPageUrl,
    });
    const decision = await machine.awaitDecision(input.challengeTimeoutSeconds * 1000);
    if (!decision) {
      await machine.move('FAILED', 'Transaction abandoned.');
    } else {
      const completed = await attempt(() =>
        connector.completeChallenge({
          transactionId: input.transactionId,
          connector: routed.terminal.connector,
          decision,
        }),
      );
      if (completed.kind === 'done') await machine.move('SUCCESS', 'Transaction processed successfully.');
      else if (completed.kind === 'failed') await machine.move('FAILED', completed.message);
      else await machine.move('FAILED', 'The payment could not be processed.');
    }
  }
  return machine.finish();
}
