import { patched } from '@temporalio/workflow';
import type { FirstStepRequest, FirstStepResult } from '../activities/index';
import type { CryptoExpectation, TransactionRef } from '../src/contracts';
import { store } from './activities';

/**
 * The merchant's settings and the deposit address are fetched by the run's first step, the one that binds
 * it to the service's record (activities/index.ts), not by two local activities of their own as in
 * histories from before.
 */
const OPENED_WITH_THE_BINDING = 'deposits-opened-with-the-binding';

type DepositInput = TransactionRef & { crypto: CryptoExpectation };

/**
 * What the run's first step is to fetch for its deposits (`TransactionStateMachine`'s `fetch`); undefined
 * in histories from before, whose `openDeposits` fetches them itself. Call before the state machine.
 */
export function depositsWithTheBinding(input: DepositInput): FirstStepRequest | undefined {
  if (!patched(OPENED_WITH_THE_BINDING)) return undefined;
  return {
    deposits: {
      merchantId: input.merchantId,
      transactionId: input.transactionId,
      network: input.crypto.cryptoNetwork,
      mode: input.mode,
      cryptoCurrency: input.crypto.cryptoCurrency,
    },
  };
}

/**
 * What a transaction taking deposits starts with: the merchant's settings, its address and deadline.
 * `opened`: the settings and address the run's first step fetched (`depositsWithTheBinding`).
 */
export async function openDeposits(input: DepositInput, opened: FirstStepResult['deposits']) {
  const { crypto } = input;
  const deadline = () => new Date(Date.now() + crypto.depositWindowSeconds * 1000).toISOString();
  if (opened) return { ...opened, expiresAt: deadline() };
  const settings = await store.cryptoSettings({
    merchantId: input.merchantId,
    cryptoCurrency: crypto.cryptoCurrency,
  });
  const address = await store.openDepositAddress({
    transactionId: input.transactionId,
    network: crypto.cryptoNetwork,
    mode: input.mode,
    currency: crypto.cryptoCurrency,
  });
  return { settings, address, expiresAt: deadline() };
}
