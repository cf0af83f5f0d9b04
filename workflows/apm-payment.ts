import { condition } from '@temporalio/workflow';
import { setInternalHandler } from './proofs';
import {
  APM_CONNECTOR_METHODS,
  apmMethodUpdate,
  connectorKeys,
  isApmMethod,
  type ApmMethod,
  type ApmPaymentInput,
  type FirstAnswer,
  type Lookup,
} from '../src/contracts';
import { connector, lookup, store } from './activities';
import { attempt, refusal } from './failures';
import { TransactionStateMachine } from './state';
import type { Placement } from './projection';
import { ask } from './unknown-outcome';
import type { ApmStatus } from '../activities/connectors/types';
import { runTransaction } from './transaction';

const NO_METHOD = 'This payment method is not available.';

/**
 * A payment by an alternative method (docs/hosted.md): the customer picks a method on our page, the
 * payment goes to the merchant's first terminal whose provider takes that method, and the customer
 * approves or declines at the provider. Each page waits as long as a 3DS challenge; a page left unanswered
 * abandons the payment.
 */
export async function apmPayment(input: ApmPaymentInput): Promise<FirstAnswer> {
  const machine = new TransactionStateMachine(input, 'apm');
  return runTransaction(machine, async () => {
    const timeoutMs = input.timeoutSeconds * 1000;
    let method: ApmMethod | undefined;
    let choosing = false;
    setInternalHandler(
      machine.proofs,
      apmMethodUpdate,
      async (choice: { method: ApmMethod }) => {
        method = choice.method;
        return machine.nextMove();
      },
      {
        description: 'the method the customer picked on the APM page.',
        validator: (choice: { method: ApmMethod }) => {
          if (!choosing || method !== undefined) throw refusal('This payment awaits no method.');
          if (!isApmMethod(choice?.method)) throw refusal('Unknown payment method.');
        },
      },
    );

    await machine.move('REDIRECT', 'Redirect the customer to redirect_url to choose a payment method.', {
      redirectUrl: input.methodPageUrl,
    });
    choosing = true;
    machine.waiting.on(
      'customer',
      'Waiting for the customer to choose a payment method',
      Date.now() + timeoutMs,
    );
    await condition(() => method !== undefined || machine.stopReason !== undefined, timeoutMs, {
      summary: 'Waiting for the customer to choose a payment method',
    });
    choosing = false;
    if (method === undefined) {
      await machine.move('FAILED', machine.stopReason ?? 'Transaction abandoned.', { redirectUrl: null });
      return;
    }
    const chosen = method;

    const terminals = await store.listTerminals({
      merchantId: input.merchantId,
      mode: input.mode,
      kind: 'apm',
      terminalId: input.terminalId,
    });
    const terminal = terminals.find((t) => APM_CONNECTOR_METHODS[t.connector]?.includes(chosen));
    if (!terminal) {
      await machine.move('FAILED', NO_METHOD, { redirectUrl: null, details: { payment_method: chosen } });
      return;
    }
    const call = {
      connector: terminal.connector,
      terminalId: terminal.terminalId,
      paymentKey: connectorKeys.apm(input.transactionId, terminal.terminalId),
    };
    const placement = {
      terminalId: terminal.terminalId,
      descriptor: terminal.descriptor,
      details: { payment_method: chosen },
    };
    machine.waiting.on('step', `Open the payment at ${terminal.connector}`);
    const started = await attempt(() =>
      connector.startApm({
        ...call,
        transactionId: input.transactionId,
        mode: input.mode,
        method: chosen,
        amountMinor: input.amountMinor,
        currency: input.currency,
      }),
    );
    let opened: { reference: string; redirectUrl?: string };
    if (started.kind === 'done') {
      opened = started.value;
    } else if (started.kind === 'unknown') {
      // The provider may have opened the payment though its answer was lost: it is asked, never guessed.
      const known = await ask(machine, terminal.connector, () => lookup.lookupApm(call));
      if (known.outcome !== 'started') {
        await end(machine, known, machine.stopReason ?? 'The payment could not be processed.', {
          ...placement,
          redirectUrl: null,
        });
        return;
      }
      opened = known;
    } else {
      const message = started.kind === 'failed' ? started.message : 'The payment could not be processed.';
      await machine.move('FAILED', message, { ...placement, redirectUrl: null });
      return;
    }
    await machine.move('REDIRECT', 'Redirect the customer to redirect_url to approve the payment.', {
      ...placement,
      acquirerReference: opened.reference,
      redirectUrl: opened.redirectUrl ?? input.providerPageUrl,
    });

    const answer = await machine.awaitDecision(
      timeoutMs,
      `Waiting for the customer at ${terminal.connector}`,
    );
    if (answer === 'timeout' || answer === 'stopped') {
      const why = answer === 'stopped' ? machine.stopReason! : 'Transaction abandoned.';
      // Whatever the customer did at the provider meanwhile is asked, and a payment still open is closed.
      await end(machine, await closePayment(machine, { ...call, reference: opened.reference }, why), why, {
        redirectUrl: null,
      });
      return;
    }
    // The answer is sent under the payment's key until the provider gives the outcome: a repeat is a
    // question, never a second payment, and a lost answer is never taken for a decline. While the provider
    // still waits for it, a stop or the page's time running out closes the payment there instead.
    const answerDeadline = Date.now() + timeoutMs;
    for (let round = 0; ; round++) {
      machine.waiting.on('step', `Send the customer's answer to ${terminal.connector}`);
      const completed = await attempt(() =>
        connector.completeApm({ ...call, reference: opened.reference, decision: answer }),
      );
      if (completed.kind === 'done') {
        await machine.move('SUCCESS', 'Transaction processed successfully.');
        return;
      }
      if (completed.kind === 'failed') {
        await machine.move('FAILED', completed.message);
        return;
      }
      const known = await ask(machine, terminal.connector, () => lookup.lookupApm(call));
      if (known.outcome !== 'started') {
        await end(machine, known, 'The payment could not be processed.');
        return;
      }
      if (machine.stopReason !== undefined || Date.now() >= answerDeadline) {
        const why = machine.stopReason ?? 'Transaction abandoned.';
        await end(machine, await closePayment(machine, { ...call, reference: opened.reference }, why), why);
        return;
      }
      await machine.waiting.backoff(
        Math.min(5_000 * 2 ** round, 10 * 60_000),
        `${terminal.connector} has not answered the customer's ${answer} (round ${round + 1})`,
      );
    }
  });
}

/** Moves to what the provider says of a payment: paid, declined, or never opened (`why`). */
async function end(
  machine: TransactionStateMachine,
  known: Exclude<Lookup<ApmStatus>, { outcome: 'pending' | 'started' }> | ApmStatus,
  why: string,
  placement: Placement = {},
): Promise<void> {
  if (known.outcome === 'approved')
    await machine.move('SUCCESS', 'Transaction processed successfully.', placement);
  else if (known.outcome === 'declined') await machine.move('FAILED', known.message, placement);
  else await machine.move('FAILED', why, placement);
}

/**
 * Closes a payment nobody finished in time (or that ops stopped): asked where it stands, and closed at the
 * provider while it still waits for the customer, so it can no longer be paid there: declined then for
 * `why`.
 */
async function closePayment(
  machine: TransactionStateMachine,
  call: { connector: string; terminalId: string; paymentKey: string; reference: string },
  why: string,
): Promise<Exclude<Lookup<ApmStatus>, { outcome: 'pending' }>> {
  for (let round = 0; ; round++) {
    const known = await ask(machine, call.connector, () => lookup.lookupApm(call));
    if (known.outcome !== 'started') return known;
    const step = `Close the payment at ${call.connector}`;
    machine.waiting.on('step', step);
    const closed = await attempt(() => lookup.cancelApm.executeWithOptions({ summary: step }, [call]));
    if (closed.kind === 'done' && closed.value.outcome === 'approved') return closed.value;
    if (closed.kind === 'done' && closed.value.outcome === 'declined')
      return { outcome: 'declined', message: why };
    await machine.waiting.backoff(
      Math.min(5_000 * 2 ** round, 10 * 60_000),
      `${call.connector} has not closed the payment (round ${round + 1})`,
    );
  }
}
