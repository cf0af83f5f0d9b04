import type { Db } from '../../src/db/client';
import { transactions } from '../../src/db/schema/index';
import { newTransactionId } from '../../src/ciphers/ids';
import { summarizeCard, vaultCard } from '../../src/transactions/card-vault';
import type {
  CardPaymentInput,
  CardPayoutInput,
  CryptoPayinInput,
  CryptoRampInput,
} from '../../src/contracts';
import type { MerchantCredentials } from '../../src/merchants/accounts';
import { formatUnits } from '../../src/lib/units';

/** What the card route writes before it starts a workflow: the claim row and the vaulted card. */
export async function insertCardTransaction(
  db: Db,
  masterKey: string,
  merchant: MerchantCredentials,
  options: {
    pan: string;
    webhookUrl?: string;
    challengeTimeoutSeconds?: number;
    /** A hosted card payment: nothing of the card yet, the customer types it on the page. */
    hosted?: boolean;
  },
): Promise<CardPaymentInput> {
  const transactionId = newTransactionId();
  const card = summarizeCard(options.pan, masterKey);
  const hosted = options.hosted ?? false;
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
      ...(hosted ? {} : { cardBin: card.bin, cardLast4: card.last4, cardFingerprint: card.fingerprint }),
    });
    if (hosted) return;
    await vaultCard(tx, masterKey, transactionId, {
      pan: options.pan,
      expiryMonth: '12',
      expiryYear: '2099',
      cvv: '123',
      holdSeconds: 3600,
    });
  });
  return {
    transactionId,
    merchantId: merchant.merchant_id,
    mode: 'test',
    amountMinor: '1050',
    currency: 'USD',
    ...(hosted
      ? { cardEntryPageUrl: `http://payments.test/api/v1/test/hosted/card/${transactionId}` }
      : { card }),
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
    await vaultCard(tx, masterKey, transactionId, {
      pan: options.pan,
      expiryMonth: '12',
      expiryYear: '2099',
      holdSeconds: 3600,
    });
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

/** The claim row of a crypto transaction, with the asset details the routes write. */
async function insertCryptoRow(
  db: Db,
  merchant: MerchantCredentials,
  kind: 'ramp' | 'crypto_payin',
  crypto: { cryptoCurrency: string; cryptoNetwork: string },
  options: { walletId?: string; transactionType?: 'ONRAMP' | 'OFFRAMP' } = {},
) {
  const transactionId = newTransactionId();
  const details =
    kind === 'ramp'
      ? {
          transaction_type: options.transactionType,
          crypto: crypto.cryptoCurrency,
          crypto_network: crypto.cryptoNetwork,
        }
      : { crypto_currency: crypto.cryptoCurrency, crypto_network: crypto.cryptoNetwork };
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
    walletId: options.walletId ?? null,
    details,
  });
  return transactionId;
}

const USDT_ON_TRON = {
  cryptoCurrency: 'USDT',
  cryptoNetwork: 'TRON',
  decimals: 6,
  expectedUnits: '100000000',
  fiatMinor: '10000',
  fiatDecimals: 2,
  depositWindowSeconds: 3600,
};

/** A USDT-on-TRON payin of 100 USD expecting 100 USDT (6 decimals); `crypto` overrides the asset. */
export async function insertPayinTransaction(
  db: Db,
  merchant: MerchantCredentials,
  crypto: Partial<CryptoPayinInput['crypto']> = {},
): Promise<CryptoPayinInput> {
  const wallet = merchant.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!;
  const expectation = { ...USDT_ON_TRON, ...crypto };
  const transactionId = await insertCryptoRow(db, merchant, 'crypto_payin', expectation, {
    walletId: wallet.wallet_id,
  });
  return {
    transactionId,
    merchantId: merchant.merchant_id,
    mode: 'test',
    crypto: expectation,
    walletId: wallet.wallet_id,
    hostedPageUrl: `http://payments.test/api/v1/test/crypto/checkout/${transactionId}`,
  };
}

/** A 100 USD ramp for 100 USDT on TRON; `crypto` overrides the asset. */
export async function insertRampTransaction(
  db: Db,
  merchant: MerchantCredentials,
  transactionType: 'ONRAMP' | 'OFFRAMP',
  crypto: Partial<CryptoRampInput['crypto']> = {},
): Promise<CryptoRampInput> {
  const expectation = { ...USDT_ON_TRON, ...crypto };
  const transactionId = await insertCryptoRow(db, merchant, 'ramp', expectation, { transactionType });
  return {
    transactionId,
    merchantId: merchant.merchant_id,
    mode: 'test',
    transactionType,
    crypto: expectation,
    walletAddress: 'TXYZabc123456789wallet',
    fiatCurrency: 'USD',
    fiatAmount: formatUnits(BigInt(expectation.fiatMinor), expectation.fiatDecimals),
    paymentWindowSeconds: 1800,
    hostedPageUrl: `http://payments.test/api/v1/test/crypto/checkout/${transactionId}`,
  };
}
