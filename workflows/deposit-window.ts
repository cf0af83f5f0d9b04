import { deprecatePatch } from '@temporalio/workflow';
import type { CryptoExpectation, TransactionRef } from '../src/contracts';
import { store } from './activities';

/**
 * The deposit address is opened by a local activity (it is kept per transaction, so a task run again gets
 * the same one), and the first answer leaves with the first workflow task. Deprecated
 * (docs/architecture.md, retiring a patch).
 */
const LOCAL_DEPOSIT_ADDRESS = 'deposit-address-opened-locally';

/** What a transaction taking deposits starts with: the merchant's settings, its address and deadline. */
export async function openDeposits(input: TransactionRef & { crypto: CryptoExpectation }) {
  const { crypto } = input;
  const settings = await store.cryptoSettings({
    merchantId: input.merchantId,
    cryptoCurrency: crypto.cryptoCurrency,
  });
  deprecatePatch(LOCAL_DEPOSIT_ADDRESS);
  const address = await store.openDepositAddress({
    transactionId: input.transactionId,
    network: crypto.cryptoNetwork,
    mode: input.mode,
    currency: crypto.cryptoCurrency,
  });
  const expiresAt = new Date(Date.now() + crypto.depositWindowSeconds * 1000).toISOString();
  return { settings, address, expiresAt };
}
