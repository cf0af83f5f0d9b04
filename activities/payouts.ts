import type { Db } from '../src/db/client';
import { readVaultedCard } from '../src/transactions/card-vault';
import { failureTypes, type Mode } from '../src/contracts';
import type { PayoutProcessor, PayoutResult } from './connectors/types';
import type { Lookup } from './connectors/errors';
import { businessOutcome, callConnector, unknownConnector } from './connector-calls';

export type PayoutOutcome = { outcome: 'paid' | 'verification'; reference: string };

/** Card payouts through the terminal's processor; the card number comes from the vault, a decline is final. */
export function payoutActivities(db: Db, masterKey: string, processors: Record<string, PayoutProcessor>) {
  const processorFor = (name: string) => processors[name] ?? unknownConnector('payout', name);
  const settled = (result: PayoutResult): PayoutOutcome => {
    if (result.outcome === 'declined') throw businessOutcome(result.message, failureTypes.declined);
    return result;
  };

  return {
    async sendPayout(input: {
      transactionId: string;
      /** Sent with the request; the same key never pays twice. */
      payoutKey: string;
      mode: Mode;
      connector: string;
      amountMinor: string;
      currency: string;
    }): Promise<PayoutOutcome> {
      const processor = processorFor(input.connector);
      const card = await readVaultedCard(db, masterKey, input.transactionId);
      if (!card?.pan || !card.expiry)
        throw businessOutcome('Card data expired before the payout.', failureTypes.declined);
      const { pan, expiry } = card;
      const result = await callConnector(input.connector, () =>
        processor.send({
          idempotencyKey: input.payoutKey,
          transactionId: input.transactionId,
          mode: input.mode,
          pan,
          expiry,
          amountMinor: BigInt(input.amountMinor),
          currency: input.currency,
        }),
      );
      return settled(result);
    },

    async confirmPayout(input: {
      connector: string;
      payoutKey: string;
      reference: string;
      decision: 'approve' | 'decline';
    }): Promise<PayoutOutcome> {
      const processor = processorFor(input.connector);
      return settled(await callConnector(input.connector, () => processor.confirm(input)));
    },

    /** Asks the processor where a payout stands, for a call whose answer was lost. */
    async lookupPayout(input: { connector: string; payoutKey: string }): Promise<Lookup<PayoutResult>> {
      const processor = processorFor(input.connector);
      return callConnector(input.connector, () => processor.lookup(input), { asking: true });
    },
  };
}
