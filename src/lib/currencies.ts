import currencyCodes from 'currency-codes';

/** Minor-unit exponent of an active ISO 4217 currency, or undefined when it is not one. */
export function currencyExponent(code: string): number | undefined {
  const entry = currencyCodes.code(code);
  if (!entry || entry.digits === undefined) return undefined;
  return entry.digits;
}

/** ISO 4217 codes that are not money a merchant is paid in: metals, funds, testing and "no currency". */
const FUNDS_CODES = new Set([
  'XAU',
  'XAG',
  'XPT',
  'XPD',
  'XDR',
  'XTS',
  'XXX',
  'XSU',
  'XUA',
  'XBA',
  'XBB',
  'XBC',
  'XBD',
]);

export function isFiatCurrency(code: string): boolean {
  return /^[A-Z]{3}$/.test(code) && !FUNDS_CODES.has(code) && currencyExponent(code) !== undefined;
}

/** Every fiat currency code the API takes (upper case; any case is read), for the API reference. */
export const FIAT_CURRENCIES: readonly string[] = currencyCodes.codes().filter(isFiatCurrency).sort();
