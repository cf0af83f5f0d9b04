import { patched } from '@temporalio/workflow';
import type { CryptoExpectation, TransactionRef } from '../src/contracts';
import { chain, store } from './activities';

/**
 * The deposit address is opened by a local activity (it is kept per transaction, so a task run again gets
 * the same one), and the first answer leaves with the first workflow task. Histories from before the
 * change replay with the remote activity (README, "Changing a workflow safely").
 */
const LOCAL_DEPOSIT_ADDRESS = 'deposit-address-opened-locally';

/** What a transaction taking deposits starts with: the merchant's settings, its address and deadline. */
export async function openDeposits(input: TransactionRef & { crypto: CryptoExpectation }) {
  const { crypto } = input;
  const settings = await store.cryptoSettings({
    merchantId: input.merchantId,
    cryptoCurrency: crypto.cryptoCurrency,
  });
  const address = await (patched(LOCAL_DEPOSIT_ADDRESS) ? store : chain).openDepositAddress({
    transactionId: input.transactionId,
    network: crypto.cryptoNetwork,
    mode: input.mode,
    currency: crypto.cryptoCurrency,
  });
  const expiresAt = new Date(Date.now() + crypto.depositWindowSeconds * 1000).toISOString();
  return { settings, address, expiresAt };
}
