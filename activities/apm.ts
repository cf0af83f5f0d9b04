import type { Db } from '../src/db/client';
import { failureTypes, type ApmMethod, type Mode } from '../src/contracts';
import { terminalCredentials } from '../src/merchants/terminals';
import type { ApmProvider, ApmStatus, TerminalAccess } from './connectors/types';
import type { Lookup } from './connectors/errors';
import { businessOutcome, callConnector, unknownConnector } from './connector-calls';

interface ApmCall {
  connector: string;
  terminalId: string;
  /** The payment's key at this terminal: a repeat gets the provider's first answer. */
  paymentKey: string;
}

/**
 * Alternative-payment-method calls through the terminal's provider (docs/hosted.md). A decline is a
 * non-retryable failure with the provider's message; what the provider could not answer is retried under
 * the same key, so it is asked again, never guessed.
 */
export function apmActivities(db: Db, masterKey: string, providers: Record<string, ApmProvider>) {
  const providerFor = (name: string) => providers[name] ?? unknownConnector('payment method', name);
  const terminalAccess = async (terminalId: string): Promise<TerminalAccess> => ({
    terminalId,
    credentials: await terminalCredentials(db, masterKey, terminalId),
  });

  return {
    async startApm(
      input: ApmCall & {
        transactionId: string;
        mode: Mode;
        method: ApmMethod;
        amountMinor: string;
        currency: string;
      },
    ): Promise<{ reference: string; redirectUrl?: string }> {
      const provider = providerFor(input.connector);
      const terminal = await terminalAccess(input.terminalId);
      return callConnector(input.connector, () =>
        provider.start({
          idempotencyKey: input.paymentKey,
          transactionId: input.transactionId,
          mode: input.mode,
          method: input.method,
          amountMinor: BigInt(input.amountMinor),
          currency: input.currency,
          terminal,
        }),
      );
    },

    async completeApm(
      input: ApmCall & { reference: string; decision: 'approve' | 'decline' },
    ): Promise<'approved'> {
      const provider = providerFor(input.connector);
      const terminal = await terminalAccess(input.terminalId);
      const result = await callConnector(input.connector, () =>
        provider.complete({
          idempotencyKey: input.paymentKey,
          reference: input.reference,
          decision: input.decision,
          terminal,
        }),
      );
      if (result.outcome === 'declined') throw businessOutcome(result.message, failureTypes.declined);
      return 'approved';
    },

    /** Where a payment stands at its provider, asked until it answers. */
    async lookupApm(input: ApmCall): Promise<Lookup<ApmStatus>> {
      const provider = providerFor(input.connector);
      const terminal = await terminalAccess(input.terminalId);
      return callConnector(
        input.connector,
        () => provider.lookup({ idempotencyKey: input.paymentKey, terminal }),
        { asking: true },
      );
    },

    /** Closes a payment the customer left unfinished at the provider; approved when they paid first. */
    async cancelApm(input: ApmCall & { reference: string }): Promise<ApmStatus> {
      const provider = providerFor(input.connector);
      const terminal = await terminalAccess(input.terminalId);
      return callConnector(
        input.connector,
        () => provider.cancel({ idempotencyKey: input.paymentKey, reference: input.reference, terminal }),
        { asking: true },
      );
    },
  };
}
