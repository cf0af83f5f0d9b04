import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { failureTypes, type CardPaymentInput, type FirstAnswer } from '../src/temporal/contracts';
import { connector, store } from './activities';
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

  let routed: { terminal: (typeof terminals)[number]; outcome: 'approved' | 'challenge' } | undefined;
  let declined: string | undefined;
  try {
    for (const [rank, terminal] of terminals.entries()) {
      try {
        const result = await connector.authorizeCard({
          transactionId: input.transactionId,
          mode: input.mode,
          connector: terminal.connector,
          terminalRank: rank,
          amountMinor: input.amountMinor,
          currency: input.currency,
        });
        routed = { terminal, outcome: result.outcome };
        break;
      } catch (error) {
        const reason = businessFailure(error);
        if (reason === undefined) continue;
        declined = reason;
        await machine.move('FAILED', reason, {
          terminalId: terminal.terminalId,
          descriptor: terminal.descriptor,
        });
        break;
      }
    }
  } finally {
    await store.purgeCardData({ transactionId: input.transactionId });
  }

  if (!machine.isFinal() && declined === undefined) {
    if (!routed) {
      await machine.move(
        'FAILED',
        terminals.length === 0
          ? 'No terminal is available for this transaction.'
          : 'The payment could not be processed.',
      );
    } else {
      const placement = { terminalId: routed.terminal.terminalId, descriptor: routed.terminal.descriptor };
      if (routed.outcome === 'approved') {
        await machine.move('SUCCESS', 'Transaction processed successfully.', placement);
      } else {
        await machine.move(
          'REDIRECT',
          'Redirect the customer to redirect_url to complete 3DS authentication.',
          {
            ...placement,
            redirectUrl: input.hostedPageUrl,
          },
        );
        const decision = await machine.awaitDecision(input.challengeTimeoutSeconds * 1000);
        if (!decision) {
          await machine.move('FAILED', 'Transaction abandoned.');
        } else {
          try {
            await connector.completeChallenge({
              transactionId: input.transactionId,
              connector: routed.terminal.connector,
              decision,
            });
            await machine.move('SUCCESS', 'Transaction processed successfully.');
          } catch (error) {
            const reason = businessFailure(error);
            if (reason === undefined) throw error;
            await machine.move('FAILED', reason);
          }
        }
      }
    }
  }

  return machine.finish();
}

/** The decline message when `error` is a business outcome; undefined for a technical failure. */
function businessFailure(error: unknown): string | undefined {
  if (error instanceof ActivityFailure && error.cause instanceof ApplicationFailure) {
    if (error.cause.type === failureTypes.declined) return error.cause.message;
    return undefined;
  }
  throw error;
}
