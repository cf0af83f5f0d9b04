import type { Db } from '../db/client';
import { fiatUsdRate, type CryptoAsset } from './catalogue';

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
