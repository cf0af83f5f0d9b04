import { eq, sql } from 'drizzle-orm';
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../src/db/client';
import { cardVault } from '../src/db/schema/index';
import { decryptSecret } from '../src/ciphers/secrets';
import { connectorKeys, failureTypes, type Mode } from '../src/contracts';
import type { AuthorizeResult, CardAcquirer, TerminalAccess } from './connectors/types';
import { terminalCredentials } from '../src/merchants/terminals';
import type { Lookup } from './connectors/errors';
import { callConnector, unknownConnector } from './connector-calls';

export interface AuthorizeInput {
  transactionId: string;
  /** Sent with the request; the same key never charges twice. */
  authorizationKey: string;
  mode: Mode;
  connector: string;
  /** The terminal the call goes through; absent in histories recorded before terminals had credentials. */
  terminalId?: string;
  terminalRank: number;
  amountMinor: string;
  currency: string;
}

export type AuthorizeOutcome =
  | { outcome: 'approved'; reference: string }
  | { outcome: 'challenge'; reference: string; redirectUrl?: string };

/**
 * Card authorization through the terminal's connector. The card comes from the vault, so neither the
 * number nor the CVV is ever an activity argument or result; a decline is a non-retryable failure.
 */
export function cardActivities(
  db: Db,
  options: { masterKey: string; baseUrl: string },
  connectors: Record<string, CardAcquirer>,
) {
  const { masterKey } = options;
  const connectorFor = (name: string) => connectors[name] ?? unknownConnector('card', name);
  const terminalAccess = async (terminalId: string | undefined): Promise<TerminalAccess> => ({
    terminalId: terminalId ?? '',
    credentials: terminalId ? await terminalCredentials(db, masterKey, terminalId) : undefined,
  });
  const settled = (result: AuthorizeResult): AuthorizeOutcome => {
    if (result.outcome === 'declined')
      throw ApplicationFailure.nonRetryable(result.message, failureTypes.declined);
    return result;
  };

  return {
    async authorizeCard(input: AuthorizeInput): Promise<AuthorizeOutcome> {
      const acquirer = connectorFor(input.connector);
      const [card] = await db
        .select({
          pan: cardVault.panEnc,
          expiry: cardVault.expiryEnc,
          cvv: sql<string | null>`case when ${cardVault.cvvExpiresAt} > now() then ${cardVault.cvvEnc} end`,
          sentBefore: sql<boolean>`${input.authorizationKey} = any(${cardVault.authorizationsSent})`,
        })
        .from(cardVault)
        .where(eq(cardVault.transactionId, input.transactionId));
      const terminal = await terminalAccess(input.terminalId);
      if (!card?.pan || !card.expiry || !card.cvv) {
        // A workflow task lost after the purge (a worker crash) runs this call again: the first run may
        // have authorized, so the acquirer is asked before the card is called expired.
        const known = await callConnector(
          input.connector,
          () => acquirer.lookup({ authorizationKey: input.authorizationKey, terminal }),
          { asking: true },
        );
        if (known.outcome === 'pending')
          throw new Error(`${input.connector}: the authorization is in progress`);
        if (known.outcome !== 'not_found') return settled(known);
        throw ApplicationFailure.nonRetryable(
          'Card data expired before authorization.',
          failureTypes.declined,
        );
      }
      const { pan, expiry, cvv, sentBefore } = card;
      if (!sentBefore) {
        await db
          .update(cardVault)
          .set({
            authorizationsSent: sql`array_append(${cardVault.authorizationsSent}, ${input.authorizationKey})`,
          })
          .where(eq(cardVault.transactionId, input.transactionId));
      }
      const result = await callConnector(
        input.connector,
        () =>
          acquirer.authorize({
            idempotencyKey: input.authorizationKey,
            transactionId: input.transactionId,
            mode: input.mode,
            pan: decryptSecret(pan, masterKey),
            cvv: decryptSecret(cvv, masterKey),
            expiry: decryptSecret(expiry, masterKey),
            amountMinor: BigInt(input.amountMinor),
            currency: input.currency,
            terminalRank: input.terminalRank,
            terminal,
            returnUrl: `${options.baseUrl}/api/v1/${input.mode}/card/return/${input.transactionId}`,
          }),
        { sentBefore },
      );
      return settled(result);
    },

    async completeChallenge(input: {
      connector: string;
      terminalId?: string;
      authorizationKey: string;
      reference: string;
      decision: 'approve' | 'decline';
    }): Promise<AuthorizeOutcome> {
      const acquirer = connectorFor(input.connector);
      const terminal = await terminalAccess(input.terminalId);
      return settled(
        await callConnector(input.connector, () => acquirer.completeChallenge({ ...input, terminal })),
      );
    },

    /** Asks the acquirer where an authorization stands, for a call whose answer was lost. */
    /**
     * Refunds an approved payment in full at the acquirer that took it, under the transaction's refund
     * key: a retry refunds once. The acquirer's refusal is a non-retryable failure with its message;
     * anything it could not answer is retried (the refund is owed until it says).
     */
    async refundCard(input: {
      transactionId: string;
      connector: string;
      terminalId: string;
      reference?: string;
    }): Promise<string> {
      const acquirer = connectorFor(input.connector);
      const terminal = await terminalAccess(input.terminalId);
      const result = await callConnector(
        input.connector,
        () =>
          acquirer.refund({
            authorizationKey: connectorKeys.authorization(input.transactionId, input.terminalId),
            refundKey: connectorKeys.refund(input.transactionId),
            terminal,
            ...(input.reference ? { reference: input.reference } : {}),
          }),
        { asking: true },
      );
      if (result.outcome === 'refused')
        throw ApplicationFailure.nonRetryable(result.message, failureTypes.declined);
      return result.reference;
    },

    async lookupAuthorization(input: {
      connector: string;
      terminalId?: string;
      authorizationKey: string;
    }): Promise<Lookup<AuthorizeResult>> {
      const acquirer = connectorFor(input.connector);
      const terminal = await terminalAccess(input.terminalId);
      return callConnector(input.connector, () => acquirer.lookup({ ...input, terminal }), { asking: true });
    },
  };
}
