import { eq, sql } from 'drizzle-orm';
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../src/db/client';
import { cardVault } from '../src/db/schema/index';
import { decryptSecret } from '../src/crypto/secrets';
import { failureTypes, type Mode } from '../src/temporal/contracts';
import { TechnicalFailure, type CardAcquirer } from './connectors/sandbox-acquirer';

export interface AuthorizeInput {
  transactionId: string;
  mode: Mode;
  connector: string;
  terminalRank: number;
  amountMinor: string;
  currency: string;
}

export type AuthorizeOutcome = { outcome: 'approved' | 'challenge'; reference: string };

/**
 * Card authorization through the terminal's connector. The card comes from the vault, so neither the
 * number nor the CVV is ever an activity argument or result; a decline is a non-retryable failure.
 */
export function cardActivities(db: Db, masterKey: string, connectors: Record<string, CardAcquirer>) {
  function connectorFor(name: string): CardAcquirer {
    const connector = connectors[name];
    if (!connector)
      throw ApplicationFailure.nonRetryable(`Unknown card connector ${name}.`, failureTypes.technical);
    return connector;
  }

  return {
    async authorizeCard(input: AuthorizeInput): Promise<AuthorizeOutcome> {
      const [card] = await db
        .select({
          pan: cardVault.panEnc,
          expiry: cardVault.expiryEnc,
          cvv: sql<string | null>`case when ${cardVault.cvvExpiresAt} > now() then ${cardVault.cvvEnc} end`,
        })
        .from(cardVault)
        .where(eq(cardVault.transactionId, input.transactionId));
      if (!card || !card.cvv) {
        throw ApplicationFailure.nonRetryable(
          'Card data expired before authorization.',
          failureTypes.declined,
        );
      }
      try {
        const result = await connectorFor(input.connector).authorize({
          transactionId: input.transactionId,
          mode: input.mode,
          pan: decryptSecret(card.pan, masterKey),
          cvv: decryptSecret(card.cvv, masterKey),
          expiry: decryptSecret(card.expiry, masterKey),
          amountMinor: BigInt(input.amountMinor),
          currency: input.currency,
          terminalRank: input.terminalRank,
        });
        if (result.outcome === 'declined')
          throw ApplicationFailure.nonRetryable(result.message, failureTypes.declined);
        return result;
      } catch (error) {
        // Connector faults stay retryable; their text may echo request data, so it is not passed on.
        if (error instanceof TechnicalFailure)
          throw new Error(`connector ${input.connector} failed: technical failure`);
        throw error;
      }
    },

    async completeChallenge(input: {
      transactionId: string;
      connector: string;
      decision: 'approve' | 'decline';
    }): Promise<AuthorizeOutcome> {
      const result = await connectorFor(input.connector).completeChallenge(input);
      if (result.outcome === 'declined')
        throw ApplicationFailure.nonRetryable(result.message, failureTypes.declined);
      return result;
    },
  };
}
