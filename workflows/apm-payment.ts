import { condition, setHandler } from '@temporalio/workflow';
import {
  APM_CONNECTOR_METHODS,
  apmMethodUpdate,
  connectorKeys,
  isApmMethod,
  type ApmMethod,
  type ApmPaymentInput,
  type FirstAnswer,
} from '../src/contracts';
import { connector, store } from './activities';
import { attempt } from './failures';
import { TransactionStateMachine } from './state';
import { runTransaction, shielded } from './transaction';

const NO_METHOD = 'This payment method is not available.';

/**
 * A payment by an alternative method (docs/hosted.md): the customer picks a method on our page, the
 * payment goes to the merchant's first terminal whose provider takes that method, and the customer
 * approves or declines at the provider. Each page waits as long as a 3DS challenge; a page left unanswered
 * abandons the payment.
 */
export async function apmPayment(input: ApmPaymentInput): Promise<FirstAnswer> {
  const machine = new TransactionStateMachine(input.transactionId, 'apm');
  return runTransaction(machine, async () => {
    const timeoutMs = input.timeoutSeconds * 1000;
    let method: ApmMethod | undefined;
    let choosing = false;
    setHandler(
      apmMethodUpdate,
      shielded(async (choice: { method: ApmMethod }) => {
        method = choice.method;
        return machine.nextSnapshot();
      }),
      {
        description: 'Internal: the method the customer picked on the APM page.',
        validator: (choice: { method: ApmMethod }) => {
          if (!choosing || method !== undefined) throw new Error('This payment awaits no method.');
          if (!isApmMethod(choice?.method)) throw new Error('Unknown payment method.');
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
    if (started.kind !== 'done') {
      const message = started.kind === 'failed' ? started.message : 'The payment could not be processed.';
      await machine.move('FAILED', message, { ...placement, redirectUrl: null });
      return;
    }
    await machine.move('REDIRECT', 'Redirect the customer to redirect_url to approve the payment.', {
      ...placement,
      acquirerReference: started.value.reference,
      redirectUrl: started.value.redirectUrl ?? input.providerPageUrl,
    });

    const answer = await machine.awaitDecision(
      timeoutMs,
      `Waiting for the customer at ${terminal.connector}`,
    );
    if (answer === 'timeout' || answer === 'stopped') {
      await machine.move('FAILED', answer === 'stopped' ? machine.stopReason! : 'Transaction abandoned.', {
        redirectUrl: null,
      });
      return;
    }
    // The answer is sent under the payment's key until the provider gives the outcome: a repeat is a
    // question, never a second payment, and a lost answer is never taken for a decline.
    for (let round = 0; ; round++) {
      machine.waiting.on('step', `Send the customer's answer to ${terminal.connector}`);
      const completed = await attempt(() =>
        connector.completeApm({ ...call, reference: started.value.reference, decision: answer }),
      );
      if (completed.kind === 'done') {
        await machine.move('SUCCESS', 'Transaction processed successfully.');
        return;
      }
      if (completed.kind !== 'unknown') {
        const message =
          completed.kind === 'failed' ? completed.message : 'The payment could not be processed.';
        await machine.move('FAILED', message);
        return;
      }
      await machine.outcomeUnknown();
      await machine.waiting.backoff(
        Math.min(5_000 * 2 ** round, 10 * 60_000),
        `${terminal.connector} has not answered the customer's ${answer} (round ${round + 1})`,
      );
    }
  });
}
