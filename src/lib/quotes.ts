import Decimal from 'decimal.js';

const Exact = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_DOWN });

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
