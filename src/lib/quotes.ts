import Decimal from 'decimal.js';
import type { Db } from '../db/client';
import { fiatUsdRate, type CryptoAsset } from '../catalogue';

const Exact = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_DOWN });

/** Where prices come from. The sandbox reads the catalogue; a live feed can take its place. */
export interface RateSource {
  /** USD per one unit of the crypto asset. */
  cryptoUsd(asset: CryptoAsset): Promise<string>;
  /** USD per one unit of the fiat currency, or undefined when the currency is not offered. */
  fiatUsd(currency: string): Promise<string | undefined>;
}

export function sandboxRates(db: Db): RateSource {
  return {
    cryptoUsd: async (asset) => asset.usdRate,
    fiatUsd: (currency) => fiatUsdRate(db, currency),
  };
}

export interface Quote {
  /** Fiat per one crypto unit, as shown to the customer. */
  rate: string;
  fiatAmount: string;
  cryptoAmount: string;
}

function plain(value: Decimal): string {
  return value.toFixed();
}

/**
 * Prices one side from the other, exactly. Rounding always favours the service's books being whole:
 * crypto paid out rounds down, crypto asked for rounds up, fiat paid out rounds down.
 */
export function quote(options: {
  cryptoUsd: string;
  fiatUsd: string;
  cryptoDecimals: number;
  fiatDecimals: number;
  given: { fiat: string } | { crypto: string };
  cryptoRounding: 'down' | 'up';
}): Quote {
  const rate = new Exact(options.cryptoUsd).div(options.fiatUsd);
  if ('fiat' in options.given) {
    const crypto = new Exact(options.given.fiat)
      .div(rate)
      .toDecimalPlaces(
        options.cryptoDecimals,
        options.cryptoRounding === 'up' ? Decimal.ROUND_UP : Decimal.ROUND_DOWN,
      );
    return {
      rate: plain(rate.toDecimalPlaces(18)),
      fiatAmount: plain(new Exact(options.given.fiat)),
      cryptoAmount: plain(crypto),
    };
  }
  const fiat = new Exact(options.given.crypto)
    .mul(rate)
    .toDecimalPlaces(options.fiatDecimals, Decimal.ROUND_DOWN);
  return {
    rate: plain(rate.toDecimalPlaces(18)),
    fiatAmount: plain(fiat),
    cryptoAmount: plain(new Exact(options.given.crypto)),
  };
}
