import type { z } from 'zod';
import type { RampRequest as RampSchema } from '../schemas/requests';
import { fieldError } from '../platform/errors';
import { nodeNetwork } from '../coins/networks';
import { parseUnits } from '../lib/units';
import { createTransaction, type CreateOrigin, type Created } from './create';
import { checkMerchantUrls, checkTerminal, customerOf, requestHash } from './request';
import {
  checkDecimals,
  checkLiveCrypto,
  checkCryptoLimits,
  checkLimits,
  expectation,
  ONRAMP_WINDOW_SECONDS,
  priceQuote,
  pricedFiat,
  resolveAsset,
  checkCountry,
} from './crypto-pricing';
import { hostedPageUrl, type MerchantScope, type TransactionDeps } from './deps';

/** A validated ramp request; `amount` is the fiat (ONRAMP) or crypto (OFFRAMP) amount given (docs/api.md). */
export type RampRequest = z.output<typeof RampSchema>;

/** A crypto ramp, quoted at today's rates and locked for its window, carried by `cryptoRamp`. */
export async function createRamp(
  deps: TransactionDeps,
  merchant: MerchantScope,
  input: RampRequest,
  /** The payment link the customer came through, when one creates it (docs/hosted.md). */
  origin: CreateOrigin = {},
): Promise<Created> {
  const { config } = deps;
  await checkMerchantUrls(deps, merchant, input);
  const asset = await resolveAsset(deps.db, input.crypto_currency, input.crypto_network);
  checkCountry(asset, input.country);
  await checkLiveCrypto(deps, merchant, 'ramp', asset);
  const fiat = await pricedFiat(deps.rates, 'fiat_currency', input.fiat_currency);
  const onramp = input.transaction_type === 'ONRAMP';
  if (
    onramp &&
    nodeNetwork(asset.network)?.family === 'evm' &&
    !/^0x[0-9a-fA-F]{40}$/.test(input.wallet_address)
  ) {
    fieldError(
      'wallet_address',
      `The wallet address must be an address on ${asset.network}: 0x and 40 hex digits.`,
    );
  }
  const field = onramp ? 'fiat_amount' : 'crypto_amount';
  checkDecimals(field, input.amount, onramp ? fiat.decimals : asset.decimals);
  await checkTerminal(deps.db, merchant, 'ramp', input.terminal_id);
  const given = onramp ? { fiat: input.amount } : { crypto: input.amount };
  if (onramp) checkLimits(field, input.amount, input.fiat_currency, asset);
  else
    await checkCryptoLimits(deps.rates, field, input.amount, asset, {
      ...fiat,
      currency: input.fiat_currency,
    });
  const q = await priceQuote(deps.rates, asset, fiat, given, 'down');
  if (parseUnits(q.cryptoAmount, asset.decimals) === 0n || parseUnits(q.fiatAmount, fiat.decimals) === 0n) {
    fieldError(field, 'The amount is too small to convert.');
  }
  return createTransaction(deps, merchant, {
    idempotencyKey: origin.idempotencyKey,
    kind: 'ramp',
    orderId: input.order_id ?? null,
    requestHash: requestHash(config.MASTER_KEY, { ...input, crypto_network: asset.network }),
    row: {
      amountDecimal: q.fiatAmount,
      currency: input.fiat_currency,
      customer: customerOf(input),
      country: input.country,
      merchantRedirectUrl: input.redirect_url,
      webhookUrl: input.webhook_url ?? null,
      paymentLinkId: origin.paymentLinkId ?? null,
      details: {
        transaction_type: input.transaction_type,
        fiat: input.fiat_currency,
        fiat_amount: q.fiatAmount,
        crypto: asset.code,
        crypto_amount: q.cryptoAmount,
        crypto_network: asset.network,
        wallet_address: input.wallet_address,
        rate: q.rate,
      },
    },
    workflow: 'cryptoRamp',
    input: (transactionId) => ({
      transactionId,
      ...merchant,
      transactionType: input.transaction_type,
      crypto: expectation(asset, q, fiat.decimals),
      walletAddress: input.wallet_address,
      fiatCurrency: input.fiat_currency,
      fiatAmount: q.fiatAmount,
      paymentWindowSeconds: ONRAMP_WINDOW_SECONDS,
      hostedPageUrl: hostedPageUrl(config, merchant.mode, 'crypto/checkout', transactionId),
    }),
  });
}
