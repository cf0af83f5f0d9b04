import type { z } from 'zod';
import type { PayinRequest as PayinSchema } from '../schemas/requests';
import { fieldError } from '../platform/errors';
import { findWalletFor } from '../wallets/wallets';
import { createTransaction, type CreateOrigin, type Created } from './create';
import { checkMerchantUrls, checkTerminal, customerOf, requestHash } from './request';
import {
  checkDecimals,
  checkLiveCrypto,
  checkLimits,
  expectation,
  priceQuote,
  pricedFiat,
  resolveAsset,
  checkCountry,
} from './crypto-pricing';
import { hostedPageUrl, type MerchantScope, type TransactionDeps } from './deps';

/** A validated crypto payin request; `amount` is fiat, in major units (docs/api.md). */
export type PayinRequest = z.output<typeof PayinSchema>;

/**
 * A crypto payin: the customer pays crypto quoted from the fiat amount (rounded up), carried by
 * `cryptoPayin`, and what arrives is credited to the merchant's wallet in that currency.
 */
export async function createPayin(
  deps: TransactionDeps,
  merchant: MerchantScope,
  input: PayinRequest,
  /** The payment link the customer came through, when one creates it (docs/hosted.md). */
  origin: CreateOrigin = {},
): Promise<Created> {
  const { config } = deps;
  await checkMerchantUrls(deps, merchant, input);
  const asset = await resolveAsset(deps.db, input.crypto_currency, input.crypto_network);
  checkCountry(asset, input.country);
  await checkLiveCrypto(deps, merchant, 'crypto_payin', asset);
  const fiat = await pricedFiat(deps.rates, 'currency', input.currency);
  checkDecimals('amount', input.amount, fiat.decimals);
  checkLimits('amount', input.amount, input.currency, asset);
  const wallet = await findWalletFor(deps.db, merchant, input.currency);
  if (!wallet)
    fieldError('currency', `There is no ${input.currency} wallet to credit in ${merchant.mode} mode.`);
  if (wallet.status !== 'Active')
    fieldError('currency', `The ${input.currency} wallet to credit is inactive.`);
  await checkTerminal(deps.db, merchant, 'crypto_payin', input.terminal_id);
  const q = await priceQuote(deps.rates, asset, fiat, { fiat: input.amount }, 'up');
  return createTransaction(deps, merchant, {
    idempotencyKey: origin.idempotencyKey,
    kind: 'crypto_payin',
    orderId: input.order_id ?? null,
    requestHash: requestHash(config.MASTER_KEY, { ...input, crypto_network: asset.network }),
    row: {
      amountDecimal: input.amount,
      currency: input.currency,
      customer: customerOf(input),
      country: input.country,
      merchantRedirectUrl: input.redirect_url,
      webhookUrl: input.webhook_url ?? null,
      paymentLinkId: origin.paymentLinkId ?? null,
      walletId: wallet.id,
      details: {
        crypto_currency: asset.code,
        crypto_network: asset.network,
        crypto_payment_status: null,
        crypto_amount: q.cryptoAmount,
        crypto_paid_amount: '0',
      },
    },
    workflow: 'cryptoPayin',
    input: (transactionId) => ({
      transactionId,
      ...merchant,
      crypto: expectation(asset, q, fiat.decimals),
      walletId: wallet.id,
      hostedPageUrl: hostedPageUrl(config, merchant.mode, 'crypto/checkout', transactionId),
    }),
  });
}
