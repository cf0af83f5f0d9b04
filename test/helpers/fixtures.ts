import type { Db } from '../../src/db/client';
import { transactions } from '../../src/db/schema/index';
import { newTransactionId } from '../../src/crypto/secrets';
import { summarizeCard, vaultCard } from '../../src/cards';
import type {
  CardPaymentInput,
  CardPayoutInput,
  CryptoPayinInput,
  CryptoRampInput,
} from '../../src/temporal/contracts';
import type { MerchantCredentials } from '../../src/merchants';

/** What the card route writes before it starts a workflow: the claim row and the vaulted card. */
export async function insertCardTransaction(
  db: Db,
  masterKey: string,
  merchant: MerchantCredentials,
  options: { pan: string; webhookUrl?: string; challengeTimeoutSeconds?: number },
): Promise<CardPaymentInput> {
  const transactionId = newTransactionId();
  const card = summarizeCard(options.pan, masterKey);
  await db.transaction(async (tx) => {
    await tx.insert(transactions).values({
      id: transactionId,
      merchantId: merchant.merchant_id,
      mode: 'test',
      kind: 'card',
      requestHash: 'fixture',
      message: 'Transaction is being processed.',
      amountMinor: 1050n,
      currency: 'USD',
      customer: { first_name: 'Jane', last_name: 'Doe', email: 'jane@example.com' },
      merchantRedirectUrl: 'https://merchant.example/return',
      webhookUrl: options.webhookUrl ?? null,
      cardBin: card.bin,
      cardLast4: card.last4,
      cardFingerprint: card.fingerprint,
    });
    await vaultCard(
      tx,
      masterKey,
      transactionId,
      { pan: options.pan, expiryMonth: '12', expiryYear: '2099', cvv: '123' },
      3600,
    );
  });
  return {
    transactionId,
    merchantId: merchant.merchant_id,
    mode: 'test',
    amountMinor: '1050',
    currency: 'USD',
    card,
    challengeTimeoutSeconds: options.challengeTimeoutSeconds ?? 15 * 60,
    hostedPageUrl: `http://payments.test/api/v1/test/card/checkout/${transactionId}`,
  };
}

/** What the payout route writes before it starts a workflow: the claim row and the vaulted card. */
export async function insertPayoutTransaction(
  db: Db,
  masterKey: string,
  merchant: MerchantCredentials,
  options: {
    pan: string;
    amountMinor?: bigint;
    currency?: string;
    verificationTimeoutSeconds?: number;
    webhookUrl?: string;
  },
): Promise<CardPayoutInput> {
  const transactionId = newTransactionId();
  const card = summarizeCard(options.pan, masterKey);
  const wallet = merchant.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!;
  const amount = options.amountMinor ?? 500n;
  await db.transaction(async (tx) => {
    await tx.insert(transactions).values({
      id: transactionId,
      merchantId: merchant.merchant_id,
      mode: 'test',
      kind: 'payout',
      requestHash: 'fixture',
      message: 'Transaction is being processed.',
      amountMinor: amount,
      currency: options.currency ?? 'USD',
      customer: { first_name: 'Jane', last_name: 'Doe', email: 'jane@example.com' },
      walletId: wallet.wallet_id,
      webhookUrl: options.webhookUrl ?? null,
      cardBin: card.bin,
      cardLast4: card.last4,
      cardFingerprint: card.fingerprint,
    });
    await vaultCard(
      tx,
      masterKey,
      transactionId,
      { pan: options.pan, expiryMonth: '12', expiryYear: '2099' },
      3600,
    );
  });
  return {
    transactionId,
    merchantId: merchant.merchant_id,
    mode: 'test',
    walletId: wallet.wallet_id,
    amountMinor: amount.toString(),
    currency: options.currency ?? 'USD',
    card,
    verificationTimeoutSeconds: options.verificationTimeoutSeconds ?? 24 * 60 * 60,
    hostedPageUrl: `http://payments.test/api/v1/test/payout/verification/${transactionId}`,
  };
}

async function insertCryptoRow(
  db: Db,
  merchant: MerchantCredentials,
  kind: 'ramp' | 'crypto_payin',
  walletId?: string,
) {
  const transactionId = newTransactionId();
  await db.insert(transactions).values({
    id: transactionId,
    merchantId: merchant.merchant_id,
    mode: 'test',
    kind,
    requestHash: 'fixture',
    message: 'Transaction is being processed.',
    amountDecimal: '100',
    currency: 'USD',
    customer: { first_name: 'Jane', last_name: 'Doe', email: 'jane@example.com' },
    merchantRedirectUrl: 'https://merchant.example/return',
    walletId: walletId ?? null,
  });
  return transactionId;
}

/** A USDT-on-TRON payin of 100 USD expecting 100 USDT (6 decimals); `crypto` overrides the asset. */
export async function insertPayinTransaction(
  db: Db,
  merchant: MerchantCredentials,
  crypto: Partial<CryptoPayinInput['crypto']> = {},
): Promise<CryptoPayinInput> {
  const wallet = merchant.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!;
  const transactionId = await insertCryptoRow(db, merchant, 'crypto_payin', wallet.wallet_id);
  return {
    transactionId,
    merchantId: merchant.merchant_id,
    mode: 'test',
    crypto: {
      cryptoCurrency: 'USDT',
      cryptoNetwork: 'TRON',
      decimals: 6,
      expectedUnits: '100000000',
      fiatMinor: '10000',
      fiatDecimals: 2,
      depositWindowSeconds: 3600,
      ...crypto,
    },
    walletId: wallet.wallet_id,
    hostedPageUrl: `http://payments.test/api/v1/test/crypto/checkout/${transactionId}`,
  };
}

/** A 100 USD ramp for 100 USDT on TRON. */
export async function insertRampTransaction(
  db: Db,
  merchant: MerchantCredentials,
  transactionType: 'ONRAMP' | 'OFFRAMP',
): Promise<CryptoRampInput> {
  const transactionId = await insertCryptoRow(db, merchant, 'ramp');
  return {
    transactionId,
    merchantId: merchant.merchant_id,
    mode: 'test',
    transactionType,
    crypto: {
      cryptoCurrency: 'USDT',
      cryptoNetwork: 'TRON',
      decimals: 6,
      expectedUnits: '100000000',
      fiatMinor: '10000',
      fiatDecimals: 2,
      depositWindowSeconds: 3600,
    },
    walletAddress: 'TXYZabc123456789wallet',
    fiatCurrency: 'USD',
    fiatAmount: '100',
    paymentWindowSeconds: 1800,
    hostedPageUrl: `http://payments.test/api/v1/test/crypto/checkout/${transactionId}`,
  };
}
