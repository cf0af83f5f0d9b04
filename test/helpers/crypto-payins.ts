import { expect } from 'vitest';
import { payinRequest, type MerchantClient } from './merchant-client';

/** A test-mode crypto payin, expected to be taken; its data. */
export async function createPayin(client: MerchantClient, overrides: Record<string, unknown>) {
  const response = await client.post('/api/v1/test/crypto/payin', payinRequest(overrides));
  expect(response.statusCode, response.payload).toBe(200);
  return response.json().data as { transaction_id: string; deposit_address: string; crypto_amount: number };
}

/** A test deposit through the API (on a watched chain, a real transfer from the faucet); its `deposit`. */
export async function testDeposit(client: MerchantClient, id: string, amount: string) {
  const response = await client.postPlain(`/api/v1/test/crypto/${id}/deposit`, { amount });
  expect(response.statusCode, response.payload).toBe(200);
  return response.json().deposit as { tx_hash: string; disposition: string; confirmations_required?: number };
}

/** The status endpoint's answer for a crypto transaction. */
export async function cryptoStatus(client: MerchantClient, id: string) {
  return (await client.get(`/api/test/status/${id}`)).json() as {
    status: string;
    data: { crypto_payment_status: string | null; crypto_paid_amount: number };
  };
}
