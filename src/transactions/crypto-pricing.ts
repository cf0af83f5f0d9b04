import type { Db } from '../db/client';
import { fieldError } from '../platform/errors';
import { activeAssetsOf, type CryptoAsset } from '../coins/catalogue';
import { currencyExponent } from '../lib/currencies';
import { quote, type Quote } from '../lib/quotes';
import { formatUnits, parseUnits } from '../lib/units';
import type { CryptoExpectation } from '../contracts';
import type { RateSource } from '../coins/rates';
import { LIVE_REFUSED_NETWORKS, isWatched } from '../coins/networks';
import type { MerchantScope, TransactionDeps } from './deps';

/** Minutes an ONRAMP customer has to pay, and an OFFRAMP or payin customer to deposit (docs/api.md). */
export const ONRAMP_WINDOW_SECONDS = 30 * 60;
export const DEPOSIT_WINDOW_SECONDS = 60 * 60;

/** The catalogue entry for the currency and network; the network may be left out when there is only one. */
export async function resolveAsset(db: Db, code: string, network: string | undefined): Promise<CryptoAsset> {
  // One read of the code's networks, the asset's row among them.
  const assets = await activeAssetsOf(db, code);
  const networks = assets.map((asset) => asset.network);
  if (networks.length === 0) fieldError('crypto_currency', 'The selected crypto currency is not supported.');
  if (!network && networks.length > 1) {
    fieldError(
      'crypto_network',
      `The crypto network field is required for ${code}: one of ${networks.join(', ')}.`,
    );
  }
  const asset = assets.find((candidate) => candidate.network === (network ?? networks[0]));
  if (!asset)
    fieldError('crypto_network', `The crypto network must be one of ${networks.join(', ')} for ${code}.`);
  return asset;
}

/**
 * The catalogue limits some assets to some countries, or blocks them in others (the currencies list leaves
 * them out there); a ramp or
 * payin from such a country is refused as the list would suggest, naming what is unavailable where.
 */
export function checkCountry(asset: CryptoAsset, country: string): void {
  const code = country.toUpperCase();
  const allowed = asset.allowedCountries === null || asset.allowedCountries.includes(code);
  if (!allowed || asset.blockedCountries.includes(code))
    fieldError('country', `${asset.code} on ${asset.network} is not available in ${code}.`);
}

/** The fiat currency's ISO 4217 exponent, once the rate source is known to price it. */
export async function pricedFiat(rates: RateSource, field: string, currency: string) {
  const usdRate = await rates.fiatUsd(currency);
  if (!usdRate) fieldError(field, `The selected ${field.replace('_', ' ')} is not supported.`);
  return { usdRate, decimals: currencyExponent(currency) ?? 2 };
}

/** An amount with more decimals than its currency or asset has is refused, never rounded. */
export function checkDecimals(field: string, amount: string, decimals: number): void {
  if (parseUnits(amount, decimals) === undefined) {
    fieldError(field, `The ${field.replace('_', ' ')} field must have at most ${decimals} decimal places.`);
  }
}

/**
 * The catalogue's limits are fiat amounts (major units of the request's currency); a fiat amount must lie
 * within them, and the refusal states them in that currency.
 */
export function checkLimits(
  field: string,
  fiatAmount: string,
  fiatCurrency: string,
  asset: CryptoAsset,
): void {
  const units = (v: string) => parseUnits(v, 18)!;
  const amount = units(fiatAmount);
  if (amount < units(asset.minAmount) || amount > units(asset.maxAmount)) {
    const shown = (v: string) => formatUnits(units(v), 18);
    fieldError(
      field,
      `The ${field.replace('_', ' ')} must be between ${shown(asset.minAmount)} and ${shown(asset.maxAmount)} ${fiatCurrency} for ${asset.code} on ${asset.network}.`,
    );
  }
}

/**
 * A crypto amount is held to the catalogue's fiat limits converted at today's rate (the least crypto
 * worth the minimum, the most worth no more than the maximum), and the refusal states them in crypto,
 * the unit the merchant gave, with the fiat limits beside them.
 */
export async function checkCryptoLimits(
  rates: RateSource,
  field: string,
  cryptoAmount: string,
  asset: CryptoAsset,
  fiat: { usdRate: string; decimals: number; currency: string },
): Promise<void> {
  const least = await priceQuote(rates, asset, fiat, { fiat: asset.minAmount }, 'up');
  const most = await priceQuote(rates, asset, fiat, { fiat: asset.maxAmount }, 'down');
  const amount = parseUnits(cryptoAmount, asset.decimals)!;
  const min = parseUnits(least.cryptoAmount, asset.decimals)!;
  const max = parseUnits(most.cryptoAmount, asset.decimals)!;
  if (amount < min || amount > max) {
    const shown = (v: string) => formatUnits(parseUnits(v, 18)!, 18);
    fieldError(
      field,
      `The ${field.replace('_', ' ')} must be between ${formatUnits(min, asset.decimals)} and ${formatUnits(max, asset.decimals)} ${asset.code} on ${asset.network} (${shown(asset.minAmount)} to ${shown(asset.maxAmount)} ${fiat.currency} at today's rate).`,
    );
  }
}

/** Prices one side from the other at the rate source's current rates. */
export async function priceQuote(
  rates: RateSource,
  asset: CryptoAsset,
  fiat: { usdRate: string; decimals: number },
  given: { fiat: string } | { crypto: string },
  cryptoRounding: 'down' | 'up',
): Promise<Quote> {
  return quote({
    cryptoUsd: await rates.cryptoUsd(asset),
    fiatUsd: fiat.usdRate,
    cryptoDecimals: asset.decimals,
    fiatDecimals: fiat.decimals,
    given,
    cryptoRounding,
  });
}

/**
 * What the workflow watches for on chain: the asset and the quoted amount in its smallest units, with the
 * fiat amount it is worth (together, the locked rate).
 */
export function expectation(asset: CryptoAsset, quoted: Quote, fiatDecimals: number): CryptoExpectation {
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

/**
 * Live mode moves real crypto only on a network a node watches (docs/connectors.md); elsewhere the sandbox
 * chain would stand in, which live mode refuses unless ALLOW_SANDBOX_IN_LIVE. A ramp's fiat side is a
 * sandbox connector in every network, so live ramps need that setting too.
 */
export async function checkLiveCrypto(
  deps: Pick<TransactionDeps, 'db' | 'config'>,
  merchant: MerchantScope,
  kind: 'ramp' | 'crypto_payin',
  asset: { code: string; network: string },
): Promise<void> {
  const { network } = asset;
  if (merchant.mode !== 'live') return;
  if (LIVE_REFUSED_NETWORKS.has(network))
    fieldError('crypto_network', `Network ${network} is not available.`);
  if (deps.config.ALLOW_SANDBOX_IN_LIVE) return;
  if (kind === 'ramp') {
    fieldError(
      'transaction_type',
      'Ramps are not available in live mode: their fiat side has no live connector.',
    );
  }
  if (!(await isWatched(deps.db, 'live', network))) {
    fieldError(
      'crypto_network',
      `Crypto payins on ${network} are not available in live mode: no node watches it.`,
    );
  }
  if (!(await isWatched(deps.db, 'live', network, asset.code))) {
    fieldError(
      'crypto_currency',
      `${asset.code} payins on ${network} are not available in live mode: its node watches tokens only.`,
    );
  }
}
