import { inArray } from 'drizzle-orm';
import type { Db } from '../src/db/client';
import { terminals } from '../src/db/schema/index';
import { closeCardSends, keysSentWith, noteCardSend } from '../src/transactions/card-vault';
import { connectorKeys, failureTypes, type Mode } from '../src/contracts';
import type { AuthorizeResult, CardAcquirer, TerminalAccess } from './connectors/types';
import { terminalCredentials } from '../src/merchants/terminals';
import type { Lookup } from './connectors/errors';
import { businessOutcome, callConnector, lateAttempt, sendWindow, unknownConnector } from './connector-calls';

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
  /**
   * Authorization keys this transaction sent elsewhere that the workflow has since learnt were not
   * processed: they no longer hold this send back.
   */
  notProcessed?: string[];
  /**
   * The call runs inside a workflow task: when that task started (`taskStartedAt` in
   * workflows/task-clock.ts) and how soon after it the key must be noted (half the run's task timeout). A retry of a lost task starts only once the task timed out, so it finds every key the
   * lost attempt will ever note; the acquirer's deadline counts from the task's start too, so the retry
   * knows when a noted key's request can no longer land (`workflows/card-payment.ts`).
   */
  inTheTask?: { taskStartedAt: number; notedWithinMs: number };
}

export type AuthorizeOutcome =
  | { outcome: 'approved'; reference: string }
  | { outcome: 'challenge'; reference: string; redirectUrl?: string };

/**
 * An authorization this transaction already sent through another terminal, which a lost workflow task
 * made and its retry does not know of: the workflow asks about it before anything is sent again.
 */
export type SentElsewhere = { outcome: 'sentElsewhere'; sent: SentAuthorization[] };

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
    if (result.outcome === 'declined') throw businessOutcome(result.message, failureTypes.declined);
    return result;
  };

  return {
    async authorizeCard(input: AuthorizeInput): Promise<AuthorizeOutcome | SentElsewhere> {
      const acquirer = connectorFor(input.connector);
      // The workflow may give up on this attempt (its task lost), ask the acquirer, find nothing and route
      // elsewhere: an attempt held up (a vault row locked, a worker stalled) must neither note nor send that
      // late. Without the task's start (histories from before), the bound counts from this attempt's.
      const origin = input.inTheTask?.taskStartedAt ?? Date.now();
      const late = lateAttempt(origin, 'The authorization', input.inTheTask !== undefined);
      const notedWithinMs = input.inTheTask?.notedWithinMs;
      // Read before the note, so a failure to read it leaves no key noted that was never sent.
      const terminal = await terminalAccess(input.terminalId);
      if (notedWithinMs !== undefined) late(notedWithinMs);
      // Routing is decided once: the key is noted with the card before it is sent, in one statement that
      // refuses while another attempt of this workflow sent to another terminal (a retried task may list
      // the terminals otherwise); those are asked about before this one is tried.
      const note = await noteCardSend(
        db,
        masterKey,
        input.transactionId,
        input.authorizationKey,
        input.notProcessed ?? [],
      );
      if ('elsewhere' in note) {
        if (note.elsewhere.length > 0)
          return { outcome: 'sentElsewhere', sent: await describeSent(db, note.elsewhere) };
        // Closed when the payment ended without an authorization the acquirer took: an attempt reaching
        // this after it (a lost task's, a Reset's run) sends nothing, ever.
        throw businessOutcome('The payment ended before this authorization was sent.', failureTypes.declined);
      }
      // The bound holds for the note's commit, not only its start: noted late, nothing is sent (the key stays
      // noted, so the next attempt's refusal of it is asked about, never taken as definite).
      if (note.noted && notedWithinMs !== undefined) late(notedWithinMs);
      // Not noted otherwise (no vault row): nothing is sent, and the acquirer is asked about this key below,
      // as for a purged card.
      const card = note.noted ? note.card : undefined;
      // Noted before: an earlier attempt may have sent it, so a refusal of it is not definite.
      const sentBefore = note.noted && note.before;
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
        throw businessOutcome('Card data expired before authorization.', failureTypes.declined);
      }
      const { pan, expiry, cvv } = card;
      const result = await callConnector(
        input.connector,
        () =>
          acquirer.authorize({
            idempotencyKey: input.authorizationKey,
            transactionId: input.transactionId,
            mode: input.mode,
            pan,
            cvv,
            expiry,
            amountMinor: BigInt(input.amountMinor),
            currency: input.currency,
            terminalRank: input.terminalRank,
            terminal,
            returnUrl: `${options.baseUrl}/api/v1/${input.mode}/card/return/${input.transactionId}`,
            ...sendWindow(origin),
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

    /**
     * Closes an unfinished 3-D Secure challenge at the acquirer (the customer left, or ops stopped the
     * payment): declined once closed, approved when the cardholder finished first. Asked again until the
     * acquirer answers.
     */
    async cancelAuthorization(input: {
      connector: string;
      terminalId?: string;
      authorizationKey: string;
      reference: string;
    }): Promise<AuthorizeResult> {
      const acquirer = connectorFor(input.connector);
      const terminal = await terminalAccess(input.terminalId);
      return callConnector(input.connector, () => acquirer.cancel({ ...input, terminal }), { asking: true });
    },

    /** Every authorization this transaction's card was sent for, in the order sent. */
    async sentAuthorizations(input: { transactionId: string }): Promise<SentAuthorization[]> {
      return describeSent(db, await keysSentWith(db, input.transactionId));
    },

    /**
     * Closes a card payment's authorizations before it ends without one the acquirer took (no terminal,
     * every one refused, stopped), and answers what was noted as sent before: a workflow task that was
     * lost may have sent it, so the workflow asks before it ends; nothing is noted after this.
     */
    async closeAuthorizations(input: { transactionId: string }): Promise<SentAuthorization[]> {
      return describeSent(db, await closeCardSends(db, input.transactionId));
    },

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
      if (result.outcome === 'refused') throw businessOutcome(result.message, failureTypes.declined);
      return result.reference;
    },

    /** Asks the acquirer where an authorization stands, for a call whose answer was lost. */
    async lookupAuthorization(input: {
      connector: string;
      terminalId?: string;
      authorizationKey: string;
      /** The acquirer's reference for the payment, when it gave one. */
      reference?: string;
    }): Promise<Lookup<AuthorizeResult>> {
      const acquirer = connectorFor(input.connector);
      const terminal = await terminalAccess(input.terminalId);
      return callConnector(input.connector, () => acquirer.lookup({ ...input, terminal }), { asking: true });
    },
  };
}

/** An authorization sent, with the terminal it went through (active or not). */
export interface SentAuthorization {
  authorizationKey: string;
  terminalId: string;
  connector: string;
  descriptor: string | null;
}

async function describeSent(db: Db, keys: string[]): Promise<SentAuthorization[]> {
  const sent = await terminalsOfKeys(db, keys, connectorKeys.terminalOfAuthorization);
  return sent.map(({ key, ...terminal }) => ({ authorizationKey: key, ...terminal }));
}

/**
 * The terminal each idempotency key was sent through (active or not), read by the terminal id the key
 * names (`terminalOf`).
 */
export async function terminalsOfKeys(
  db: Db,
  keys: string[],
  terminalOf: (key: string) => string,
): Promise<{ key: string; terminalId: string; connector: string; descriptor: string | null }[]> {
  if (keys.length === 0) return [];
  const ids = keys.map(terminalOf);
  const found = await db
    .select({ id: terminals.id, connector: terminals.connector, descriptor: terminals.descriptor })
    .from(terminals)
    .where(inArray(terminals.id, ids));
  return keys.map((key, i) => {
    const terminal = found.find((t) => t.id === ids[i]);
    // Terminals are never deleted (only deactivated); one that vanished cannot be asked, so nothing is
    // sent anywhere else until ops look (the activity fails and is retried).
    if (!terminal) throw new Error(`${key} went through terminal ${ids[i]}, which no longer exists`);
    return { key, terminalId: terminal.id, connector: terminal.connector, descriptor: terminal.descriptor };
  });
}
