import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { and, eq } from 'drizzle-orm';
import {
  country,
  decimalAmount,
  decimalPlaces,
  email,
  fiatCurrency,
  fieldError,
  httpUrl,
  ipAddress,
  optional,
  orderId,
  parseInput,
  personName,
  phoneNumber,
  terminalId,
  text,
} from '../fields';
import { currencyExponent } from '../../lib/currencies';
import { checkMerchantUrls, checkTerminal, customerOf, requestHash } from '../transaction-input';
import { createTransaction } from '../../transactions/create';
import { findCryptoAsset, networksOf, type CryptoAsset } from '../../catalogue';
import { quote, type RateSource } from '../../lib/quotes';
import { formatUnits, parseUnits } from '../../lib/units';
import { wallets } from '../../db/schema/index';
import type { CryptoExpectation, CryptoPayinInput, CryptoRampInput } from '../../temporal/contracts';
import type { Db } from '../../db/client';
import type { RouteDeps } from '../app';

/** Minutes an ONRAMP customer has to pay, and an OFFRAMP or payin customer to deposit (CONTRACT.md). */
const ONRAMP_WINDOW_SECONDS = 30 * 60;
const DEPOSIT_WINDOW_SECONDS = 60 * 60;

const upper = (field: string, max: number) => text(field, { max }).transform((v) => v.toUpperCase());

export const RampRequest = z
  .object({
    first_name: personName('first_name'),
    last_name: personName('last_name'),
    phone_number: phoneNumber(),
    transaction_type: z.enum(['ONRAMP', 'OFFRAMP'], {
      error: 'The transaction type field must be ONRAMP or OFFRAMP.',
    }),
    fiat_currency: fiatCurrency('fiat_currency'),
    crypto_currency: upper('crypto_currency', 10),
    crypto_network: optional(upper('crypto_network', 40)),
    crypto_amount: z.unknown().optional(),
    fiat_amount: z.unknown().optional(),
    wallet_address: text('wallet_address', {
      min: 8,
      max: 128,
      check: (v) => /^[A-Za-z0-9:_-]+$/.test(v),
      rule: 'a wallet address (letters, digits, : _ -)',
    }),
    ip_address: ipAddress(),
    email: email(),
    country: country('country', 'alpha2'),
    payment_method: optional(
      z.enum(['CARD', 'BANK', 'WALLET'], { error: 'The payment method field must be CARD, BANK or WALLET.' }),
    ),
    redirect_url: httpUrl('redirect_url'),
    webhook_url: optional(httpUrl('webhook_url')),
    order_id: optional(orderId()),
    terminal_id: optional(terminalId()),
  })
  .superRefine((value, ctx) => {
    const present = (v: unknown) => v !== undefined && v !== null && v !== '';
    const [needed, refused] =
      value.transaction_type === 'ONRAMP'
        ? ['fiat_amount', 'crypto_amount']
        : ['crypto_amount', 'fiat_amount'];
    if (!present(value[needed as 'fiat_amount'])) {
      ctx.addIssue({
        code: 'custom',
        path: [needed],
        message: `The ${needed.replace('_', ' ')} field is required when transaction type is ${value.transaction_type}.`,
      });
    }
    if (present(value[refused as 'fiat_amount'])) {
      ctx.addIssue({
        code: 'custom',
        path: [refused],
        message: `The ${refused.replace('_', ' ')} field is not allowed when transaction type is ${value.transaction_type}.`,
      });
    }
  })
  .transform((value, ctx) => {
    const field = value.transaction_type === 'ONRAMP' ? 'fiat_amount' : 'crypto_amount';
    const parsed = decimalAmount(field).safeParse(value[field]);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        ctx.addIssue({ code: 'custom', path: [field], message: issue.message });
      return z.NEVER;
    }
    return { ...value, amount: parsed.data };
  });

export const PayinRequest = z.object({
  first_name: text('first_name'),
  last_name: text('last_name'),
  email: email(),
  amount: decimalAmount('amount'),
  currency: fiatCurrency('currency'),
  crypto_currency: upper('crypto_currency', 10),
  crypto_network: optional(upper('crypto_network', 40)),
  ip_address: ipAddress(),
  phone_number: phoneNumber(),
  address: text('address', { max: 255 }),
  country: country('country', 'alpha2'),
  order_id: orderId(),
  redirect_url: httpUrl('redirect_url'),
  webhook_url: optional(httpUrl('webhook_url')),
  terminal_id: optional(terminalId()),
});

/**
 * What the workflow watches for on chain: the asset and the quoted amount in its smallest units, with the
 * fiat amount it is worth (together, the locked rate).
 */
function expectation(
  asset: CryptoAsset,
  quoted: { cryptoAmount: string; fiatAmount: string },
  fiatDecimals: number,
): CryptoExpectation {
  return {
    cryptoCurrency: asset.code,
    cryptoNetwork: asset.network,
    decimals: asset.decimals,
    expectedUnits: parseUnits(quoted.cryptoAmount, asset.decimals)!.toString(),
    fiatMinor: parseUnits(quoted.fiatAmount, fiatDecimals)!.toString(),
    fiatDecimals,
    depositWindowSeconds: DEPOSIT_WINDOW_SECONDS,
  };
}

/** The catalogue entry for the currency and network; the network may be left out when there is only one. */
async function resolveAsset(db: Db, code: string, network: string | undefined): Promise<CryptoAsset> {
  if (!network) {
    const networks = await networksOf(db, code);
    if (networks.length === 0)
      fieldError('crypto_currency', 'The selected crypto currency is not supported.');
    if (networks.length > 1) {
      fieldError(
        'crypto_network',
        `The crypto network field is required for ${code}: one of ${networks.join(', ')}.`,
      );
    }
    network = networks[0]!;
  }
  const asset = await findCryptoAsset(db, code, network);
  if (!asset) {
    const networks = await networksOf(db, code);
    if (networks.length === 0)
      fieldError('crypto_currency', 'The selected crypto currency is not supported.');
    fieldError('crypto_network', `The crypto network must be one of ${networks.join(', ')} for ${code}.`);
  }
  return asset;
}

function checkDecimals(field: string, amount: string, decimals: number): void {
  if (decimalPlaces(amount) > decimals) {
    fieldError(field, `The ${field.replace('_', ' ')} field must have at most ${decimals} decimal places.`);
  }
}

async function priced(rates: RateSource, field: string, currency: string) {
  const rate = await rates.fiatUsd(currency);
  if (!rate) fieldError(field, `The selected ${field.replace('_', ' ')} is not supported.`);
  return rate;
}

function checkLimits(field: string, fiatAmount: string, asset: CryptoAsset): void {
  const units = (v: string) => parseUnits(v, 18)!;
  const amount = units(fiatAmount);
  if (amount < units(asset.minAmount) || amount > units(asset.maxAmount)) {
    const shown = (v: string) => formatUnits(units(v), 18);
    fieldError(
      field,
      `The amount must be between ${shown(asset.minAmount)} and ${shown(asset.maxAmount)} for ${asset.code} on ${asset.network}.`,
    );
  }
}

export async function cryptoRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { config } = deps;
  const checkoutUrl = (mode: string, id: string) => `${config.baseUrl}/api/v1/${mode}/crypto/checkout/${id}`;

  app.post<{ Params: { mode: string } }>(
    '/api/v1/:mode/crypto',
    { onRequest: app.authenticate, preValidation: app.decryptBody },
    async (request, reply) => {
      const { merchantId, mode } = request.merchant;
      const input = parseInput(RampRequest, request.body);
      await checkMerchantUrls(config, mode, input);
      const asset = await resolveAsset(deps.db, input.crypto_currency, input.crypto_network);
      const fiatUsd = await priced(deps.rates, 'fiat_currency', input.fiat_currency);
      const fiatDecimals = currencyExponent(input.fiat_currency) ?? 2;
      const onramp = input.transaction_type === 'ONRAMP';
      checkDecimals(
        onramp ? 'fiat_amount' : 'crypto_amount',
        input.amount,
        onramp ? fiatDecimals : asset.decimals,
      );
      if (input.terminal_id) await checkTerminal(deps.db, merchantId, mode, 'ramp', input.terminal_id);
      const q = quote({
        cryptoUsd: await deps.rates.cryptoUsd(asset),
        fiatUsd,
        cryptoDecimals: asset.decimals,
        fiatDecimals,
        given: onramp ? { fiat: input.amount } : { crypto: input.amount },
        cryptoRounding: 'down',
      });
      checkLimits(onramp ? 'fiat_amount' : 'crypto_amount', q.fiatAmount, asset);
      if (
        parseUnits(q.cryptoAmount, asset.decimals) === 0n ||
        parseUnits(q.fiatAmount, fiatDecimals) === 0n
      ) {
        fieldError(onramp ? 'fiat_amount' : 'crypto_amount', 'The amount is too small to convert.');
      }
      const result = await createTransaction(deps.createDeps, {
        merchantId,
        mode,
        kind: 'ramp',
        orderId: input.order_id ?? null,
        requestHash: requestHash(config.MASTER_KEY, { ...input, crypto_network: asset.network }),
        row: {
          amountDecimal: q.fiatAmount,
          currency: input.fiat_currency,
          customer: customerOf(input),
          merchantRedirectUrl: input.redirect_url,
          webhookUrl: input.webhook_url ?? null,
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
        workflowType: 'cryptoRamp',
        args: (transactionId): [CryptoRampInput] => [
          {
            transactionId,
            merchantId,
            mode,
            transactionType: input.transaction_type,
            crypto: expectation(asset, q, fiatDecimals),
            walletAddress: input.wallet_address,
            fiatCurrency: input.fiat_currency,
            fiatAmount: q.fiatAmount,
            paymentWindowSeconds: ONRAMP_WINDOW_SECONDS,
            hostedPageUrl: checkoutUrl(mode, transactionId),
          },
        ],
      });
      if (result.replayed) void reply.header('idempotent-replayed', 'true');
      return result.body;
    },
  );

  app.post<{ Params: { mode: string } }>(
    '/api/v1/:mode/crypto/payin',
    { onRequest: app.authenticate, preValidation: app.decryptBody },
    async (request, reply) => {
      const { merchantId, mode } = request.merchant;
      const input = parseInput(PayinRequest, request.body);
      await checkMerchantUrls(config, mode, input);
      const asset = await resolveAsset(deps.db, input.crypto_currency, input.crypto_network);
      const fiatUsd = await priced(deps.rates, 'currency', input.currency);
      const fiatDecimals = currencyExponent(input.currency) ?? 2;
      checkDecimals('amount', input.amount, fiatDecimals);
      checkLimits('amount', input.amount, asset);
      const [wallet] = await deps.db
        .select({ id: wallets.id, status: wallets.status })
        .from(wallets)
        .where(
          and(
            eq(wallets.merchantId, merchantId),
            eq(wallets.mode, mode),
            eq(wallets.currency, input.currency),
          ),
        );
      if (!wallet) fieldError('currency', `There is no ${input.currency} wallet to credit in ${mode} mode.`);
      if (wallet.status !== 'Active')
        fieldError('currency', `The ${input.currency} wallet to credit is inactive.`);
      if (input.terminal_id)
        await checkTerminal(deps.db, merchantId, mode, 'crypto_payin', input.terminal_id);
      const q = quote({
        cryptoUsd: await deps.rates.cryptoUsd(asset),
        fiatUsd,
        cryptoDecimals: asset.decimals,
        fiatDecimals,
        given: { fiat: input.amount },
        cryptoRounding: 'up',
      });
      const result = await createTransaction(deps.createDeps, {
        merchantId,
        mode,
        kind: 'crypto_payin',
        orderId: input.order_id,
        requestHash: requestHash(config.MASTER_KEY, { ...input, crypto_network: asset.network }),
        row: {
          amountDecimal: input.amount,
          currency: input.currency,
          customer: customerOf(input),
          merchantRedirectUrl: input.redirect_url,
          webhookUrl: input.webhook_url ?? null,
          walletId: wallet.id,
          details: {
            crypto_currency: asset.code,
            crypto_network: asset.network,
            crypto_payment_status: null,
            crypto_amount: q.cryptoAmount,
            crypto_paid_amount: '0',
          },
        },
        workflowType: 'cryptoPayin',
        args: (transactionId): [CryptoPayinInput] => [
          {
            transactionId,
            merchantId,
            mode,
            crypto: expectation(asset, q, fiatDecimals),
            walletId: wallet.id,
            hostedPageUrl: checkoutUrl(mode, transactionId),
          },
        ],
      });
      if (result.replayed) void reply.header('idempotent-replayed', 'true');
      return result.body;
    },
  );
}
