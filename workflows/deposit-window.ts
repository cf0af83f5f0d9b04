import type { CryptoExpectation, TransactionRef } from '../src/contracts';
import { chain, store } from './activities';

/** What a transaction taking deposits starts with: the merchant's settings, its address and deadline. */
export async function openDeposits(input: TransactionRef & { crypto: CryptoExpectation }) {
  const { crypto } = input;
  const settings = await store.cryptoSettings({
    merchantId: input.merchantId,
    cryptoCurrency: crypto.cryptoCurrency,
  });
  const address = await chain.openDepositAddress({
    transactionId: input.transactionId,
    network: crypto.cryptoNetwork,
    mode: input.mode,
  });
  const expiresAt = new Date(Date.now() + crypto.depositWindowSeconds * 1000).toISOString();
  return { settings, address, expiresAt };
}
