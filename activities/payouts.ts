import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../src/db/client';
import { closeCardSends, noteCardSend, readVaultedCard } from '../src/transactions/card-vault';
import {
  SEND_DEADLINE_MS,
  SEND_NOTED_WITHIN_MS,
  connectorKeys,
  failureTypes,
  isFinal,
  type Mode,
} from '../src/contracts';
import { finalAlready } from './authority';
import type { PayoutProcessor, PayoutResult } from './connectors/types';
import type { Lookup } from './connectors/errors';
import { businessOutcome, callConnector, lateAttempt, sendWindow, unknownConnector } from './connector-calls';
import { payoutFundsState, reservePayoutFunds, settlePayoutFunds, type PayoutFunds } from './ledger';
import { findTransaction } from '../src/transactions/lookup';
import type { TerminalChoice } from './projection';
import { terminalsOfKeys } from './cards';

export type PayoutOutcome = { outcome: 'paid' | 'verification'; reference: string };

/** A payout's send to one terminal's processor. */
export interface PayoutSend {
  transactionId: string;
  /** Sent with the request; the same key never pays twice. */
  payoutKey: string;
  mode: Mode;
  connector: string;
  amountMinor: string;
  currency: string;
}

/** A payout key noted as sent, with the terminal it went through. */
export type SentPayout = TerminalChoice & { payoutKey: string };

/**
 * Payout keys this transaction noted as sent through other terminals, which a lost workflow task made and
 * its retry does not know of: the workflow asks about them before anything is sent again.
 */
export type PayoutSentElsewhere = { outcome: 'sentElsewhere'; sent: SentPayout[] };

/** The terminals payout keys were sent through, in the order noted. */
export async function describePayoutsSent(db: Db, keys: string[]): Promise<SentPayout[]> {
  const sent = await terminalsOfKeys(db, keys, connectorKeys.terminalOfPayout);
  return sent.map(({ key, ...terminal }) => ({ payoutKey: key, ...terminal }));
}

/** The points between the steps of `reserveAndSendPayout`, from before its first (`started`). */
export type PayoutStep = 'started' | 'reserved' | 'sent' | 'settled';

export interface PayoutOptions {
  /** Counts each ledger step taken (docs/operations.md, metrics). */
  countLedger?: (operation: 'reserve' | 'settle') => void;
  /** Runs after each step; fault-injection tests throw here to cut the activity short between steps. */
  afterStep?: (step: PayoutStep, transactionId: string) => Promise<void> | void;
}

/** Card payouts through the terminal's processor; the card number comes from the vault, a decline is final. */
export function payoutActivities(
  db: Db,
  masterKey: string,
  processors: Record<string, PayoutProcessor>,
  options: PayoutOptions = {},
) {
  const processorFor = (name: string) => processors[name] ?? unknownConnector('payout', name);
  const settled = (result: PayoutResult): PayoutOutcome => {
    if (result.outcome === 'declined') throw businessOutcome(result.message, failureTypes.declined);
    return result;
  };
  /**
   * Sends the payout, its request given up at `window`'s deadline. `firstCall`: this attempt took the
   * reserve, so no earlier one reached the send; `sentBefore`: another attempt may have sent this key, so
   * no refusal is definite. `card`: the number and expiry, when the send's note read them.
   */
  const send = async (
    input: PayoutSend,
    window: ReturnType<typeof sendWindow>,
    options: { firstCall: boolean; sentBefore: boolean; card?: { pan?: string; expiry?: string } },
  ): Promise<PayoutOutcome> => {
    const processor = processorFor(input.connector);
    const card = options.card ?? (await readVaultedCard(db, masterKey, input.transactionId));
    if (!card?.pan || !card.expiry)
      throw businessOutcome('Card data expired before the payout.', failureTypes.declined);
    const { pan, expiry } = card;
    const result = await callConnector(
      input.connector,
      () =>
        processor.send({
          ...window,
          idempotencyKey: input.payoutKey,
          transactionId: input.transactionId,
          mode: input.mode,
          pan,
          expiry,
          amountMinor: BigInt(input.amountMinor),
          currency: input.currency,
        }),
      { firstCall: options.firstCall, sentBefore: options.sentBefore },
    );
    return settled(result);
  };
  /** A payout whose funds were settled: the processor paid it; what it says of it is the answer. */
  const paidAlready = async (input: PayoutSend): Promise<PayoutOutcome> => {
    const known = await callConnector(
      input.connector,
      () => processorFor(input.connector).lookup({ payoutKey: input.payoutKey }),
      { asking: true },
    );
    if (known.outcome === 'paid') return known;
    // Settled through another terminal, or not yet shown paid here: nothing is sent; ops look.
    throw new Error(
      `payout ${input.transactionId} was settled, but ${input.connector} does not show it paid`,
    );
  };
  /** Funds released (or never reserved): the payout ended; nothing is sent. */
  const notHeld = async (transactionId: string): Promise<ApplicationFailure> => {
    const row = await findTransaction(db, transactionId);
    if (row && isFinal(row.status)) return finalAlready({ status: row.status, message: row.message });
    return businessOutcome('The payout could not be processed.', failureTypes.declined);
  };
  const after = async (step: PayoutStep, transactionId: string) => {
    await options.afterStep?.(step, transactionId);
  };

  return {
    /**
     * A payout's common path in one step: reserve the funds, send through one terminal and, when the
     * processor paid, settle. Each step is idempotent (the ledger per (wallet, transaction, step), the
     * processor per payout key), so an attempt retried after any of them repeats none. A refusal of the
     * reserve or a decline is the answer; what the workflow cannot read from a failed attempt (a lost
     * answer, a fault after the send) it asks the processor about, and it releases only on a definite
     * answer. `settled` says whether this step settled (a payout waiting on the cardholder is not).
     */
    async reserveAndSendPayout(
      input: PayoutSend & {
        funds: Omit<PayoutFunds, 'transactionId'>;
        /**
         * Given when the send runs inside the workflow task (a local activity): the keys this payout sent
         * that the workflow knows were not processed, and when the task started (`Date.now()` in the
         * workflow). The key is then noted before anything else happens, within `notedWithinMs` of the
         * task's start (half the run's task timeout; `SEND_NOTED_WITHIN_MS` when absent), and nothing
         * happens when the payout's sends were closed or another key may have been processed
         * (`noteCardSend`). Absent in runs from before, whose send was a step of its own.
         */
        inTheTask?: { notProcessed: string[]; taskStartedAt: number; notedWithinMs?: number };
      },
    ): Promise<(PayoutOutcome & { settled: boolean }) | PayoutSentElsewhere> {
      const started = Date.now();
      const funds = { ...input.funds, transactionId: input.transactionId };
      const { startToCloseTimeoutMs } = Context.current().info;
      // The workflow may give up on this attempt, ask the processor, find nothing and route elsewhere or
      // release the funds: an attempt held up (a wallet row locked by another payout, a worker stalled)
      // must go no further that late (a late note stays noted: a later send of the key is then not a first
      // one). A send in the task counts from the task's start (a retry of the task may start once it timed
      // out) and is not retried: the workflow asks about it; otherwise a fresh attempt is made.
      const origin = input.inTheTask?.taskStartedAt ?? started;
      const late = lateAttempt(origin, 'The payout', input.inTheTask !== undefined);
      const sendWithinMs = (input.inTheTask ? SEND_DEADLINE_MS : startToCloseTimeoutMs) / 2;
      await after('started', input.transactionId);
      let card: { pan?: string; expiry?: string } | undefined;
      let sentBefore = false;
      if (input.inTheTask) {
        const { notProcessed, notedWithinMs = SEND_NOTED_WITHIN_MS } = input.inTheTask;
        late(notedWithinMs);
        const note = await noteCardSend(db, masterKey, input.transactionId, input.payoutKey, notProcessed);
        if ('missing' in note)
          throw businessOutcome('Card data expired before the payout.', failureTypes.declined);
        if (!note.noted) {
          if (note.elsewhere.length > 0)
            return { outcome: 'sentElsewhere', sent: await describePayoutsSent(db, note.elsewhere) };
          // Closed when the payout ended without a send of its own: a run reaching this after it (a lost
          // task's attempt, a Reset's run) sends nothing, ever.
          throw businessOutcome('The payout ended before it was sent.', failureTypes.declined);
        }
        card = note.card;
        // Noted before: an attempt of a lost task may have sent it, even after this payout learnt of a
        // refusal of it (a later round's send), so no refusal of it is definite.
        sentBefore = note.before;
        // The bound holds for the note's commit, not only its start: noted late, nothing more is done.
        late(notedWithinMs);
      }
      // In the task, only while the sends are open: held up on the wallet row past an ending that closed
      // them (and released nothing, as nothing was reserved), it must not reserve after that release.
      const reserved = await reservePayoutFunds(db, funds, { whileSendsOpen: input.inTheTask !== undefined });
      if (reserved === 'applied') options.countLedger?.('reserve');
      await after('reserved', input.transactionId);
      late(sendWithinMs);
      // Only funds held for this payout are sent: settled ones were paid (a Reset's run asks the processor
      // instead of sending), released ones went back to the wallet.
      const state = reserved === 'applied' ? 'held' : await payoutFundsState(db, funds);
      if (state === 'settled') {
        const paid = await paidAlready(input);
        await after('settled', input.transactionId);
        return { ...paid, settled: true };
      }
      if (state !== 'held') throw await notHeld(input.transactionId);
      // Reserved by this attempt: no earlier attempt reached the send, so a refusal is definite, unless
      // the key was noted before (`sentBefore`: an attempt of a lost task may have sent it).
      const outcome = await send(input, sendWindow(origin), {
        firstCall: reserved === 'applied',
        sentBefore,
        ...(card ? { card } : {}),
      });
      await after('sent', input.transactionId);
      if (outcome.outcome !== 'paid') return { ...outcome, settled: false };
      if ((await settlePayoutFunds(db, funds)) === 'applied') options.countLedger?.('settle');
      await after('settled', input.transactionId);
      return { ...outcome, settled: true };
    },

    /**
     * Closes a payout's sends before it ends without a send of its own, and answers what was noted as
     * sent before: a workflow task that was lost may have sent it, so the workflow asks before it ends.
     */
    async closePayoutSends(input: { transactionId: string }): Promise<SentPayout[]> {
      return describePayoutsSent(db, await closeCardSends(db, input.transactionId));
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
