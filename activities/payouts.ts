import { eq } from 'drizzle-orm';
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../src/db/client';
import { cardVault } from '../src/db/schema/index';
import { decryptSecret } from '../src/crypto/secrets';
import { failureTypes, type Mode } from '../src/temporal/contracts';
import type { PayoutProcessor, PayoutResult } from './connectors/sandbox-payouts';

export type PayoutOutcome = { outcome: 'paid'; reference: string } | { outcome: 'verification' };

/** Card payouts through the terminal's processor; the card number comes from the vault, a decline is final. */
export function payoutActivities(db: Db, masterKey: string, processors: Record<string, PayoutProcessor>) {
  function processorFor(name: string): PayoutProcessor {
    const processor = processors[name];
    if (!processor)
      throw ApplicationFailure.nonRetryable(`Unknown payout connector ${name}.`, failureTypes.technical);
    return processor;
  }
  function settle(result: PayoutResult): PayoutOutcome {
    if (result.outcome === 'declined')
      throw ApplicationFailure.nonRetryable(result.message, failureTypes.declined);
    return result;
  }

  return {
    async sendPayout(input: {
      transactionId: string;
      mode: Mode;
      connector: string;
      amountMinor: string;
      currency: string;
    }): Promise<PayoutOutcome> {
      const [card] = await db
        .select({ pan: cardVault.panEnc, expiry: cardVault.expiryEnc })
        .from(cardVault)
        .where(eq(cardVault.transactionId, input.transactionId));
      if (!card)
        throw ApplicationFailure.nonRetryable('Card data expired before the payout.', failureTypes.declined);
      return settle(
        await processorFor(input.connector).send({
          transactionId: input.transactionId,
          mode: input.mode,
          pan: decryptSecret(card.pan, masterKey),
          expiry: decryptSecret(card.expiry, masterKey),
          amountMinor: BigInt(input.amountMinor),
          currency: input.currency,
        }),
      );
    },

    async confirmPayout(input: {
      transactionId: string;
      connector: string;
      decision: 'approve' | 'decline';
    }) {
      return settle(await processorFor(input.connector).confirm(input));
    },
  };
}
