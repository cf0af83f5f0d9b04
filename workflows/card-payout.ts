import type { CardPayoutInput, FirstAnswer } from '../src/temporal/contracts';
import { attempt } from './failures';
import { connector, ledger, store } from './activities';
import { TransactionStateMachine } from './state';

/** Test mode pays out at most this many minor units; above it the sandbox answers "Insufficient funds." */
const TEST_MODE_LIMIT = 1000n;

/**
 * A card payout as a saga: check, reserve the amount in the wallet, send it through the merchant's payout
 * terminals (technical failures cascade), and settle on success. Every failure after the reserve runs the
 * compensations in reverse, so the wallet ends where it started.
 */
export async function cardPayout(input: CardPayoutInput): Promise<FirstAnswer> {
  const machine = new TransactionStateMachine(input.transactionId, 'payout');
  const compensations: (() => Promise<void>)[] = [];

  const fail = async (message: string) => {
    for (const undo of compensations.reverse()) await undo();
    await machine.move('FAILED', message);
  };
  const funds = {
    walletId: input.walletId,
    transactionId: input.transactionId,
    amountMinor: input.amountMinor,
  };

  try {
    const wallet = await store.getWallet({ walletId: input.walletId });
    if (wallet.currency !== input.currency) {
      await machine.move('BLOCKED', "Currency must match the wallet's currency");
    } else if (input.mode === 'test' && BigInt(input.amountMinor) > TEST_MODE_LIMIT) {
      await fail('Insufficient funds.');
    } else if (!(await reserved(funds))) {
      await fail('Insufficient funds.');
    } else {
      compensations.push(() => ledger.releaseFunds(funds));
      const sent = await send(input);
      if (sent.kind === 'failed') {
        await fail(sent.message);
      } else if (sent.outcome === 'paid') {
        await ledger.settleFunds(funds);
        await machine.move('SUCCESS', 'Transaction processed successfully.', { terminalId: sent.terminalId });
      } else {
        await machine.move(
          'PENDING',
          'Additional verification is required: redirect the user to redirect_url.',
          {
            terminalId: sent.terminalId,
            redirectUrl: input.hostedPageUrl,
          },
        );
        const decision = await machine.awaitDecision(input.verificationTimeoutSeconds * 1000);
        if (!decision) {
          await fail('Payout verification expired.');
        } else {
          const confirmed = await attempt(() =>
            connector.confirmPayout({
              transactionId: input.transactionId,
              connector: sent.connector,
              decision,
            }),
          );
          if (confirmed.kind === 'failed') {
            await fail(confirmed.message);
          } else {
            await ledger.settleFunds(funds);
            await machine.move('SUCCESS', 'Transaction processed successfully.');
          }
        }
      }
    }
  } finally {
    await store.purgeCardData({ transactionId: input.transactionId });
  }

  return machine.finish();
}

async function reserved(funds: {
  walletId: string;
  transactionId: string;
  amountMinor: string;
}): Promise<boolean> {
  const result = await attempt(() => ledger.reserveFunds(funds));
  return result.kind === 'done';
}

type Sent =
  | { kind: 'failed'; message: string }
  | { kind: 'done'; outcome: 'paid' | 'verification'; terminalId: string; connector: string };

/** Tries the payout terminals by priority: a technical failure moves on, a decline is the answer. */
async function send(input: CardPayoutInput): Promise<Sent> {
  const terminals = await store.listTerminals({
    merchantId: input.merchantId,
    mode: input.mode,
    kind: 'payout',
    terminalId: input.terminalId,
  });
  for (const terminal of terminals) {
    const result = await attempt(() =>
      connector.sendPayout({
        transactionId: input.transactionId,
        mode: input.mode,
        connector: terminal.connector,
        amountMinor: input.amountMinor,
        currency: input.currency,
      }),
    );
    if (result.kind === 'failed') return result;
    if (result.kind === 'done') {
      return {
        kind: 'done',
        outcome: result.value.outcome,
        terminalId: terminal.terminalId,
        connector: terminal.connector,
      };
    }
  }
  return {
    kind: 'failed',
    message:
      terminals.length === 0
        ? 'No terminal is available for this transaction.'
        : 'The payout could not be processed.',
  };
}
