import countries from 'i18n-iso-countries';

/** The ISO 3166-1 alpha-2 code for an alpha-2 or alpha-3 code (any case), or undefined. */
export function countryAlpha2(code: string): string | undefined {
  const upper = code.toUpperCase();
  if (/^[A-Z]{2}$/.test(upper) && countries.isValid(upper)) return upper;
  if (/^[A-Z]{3}$/.test(upper) && countries.isValid(upper)) return countries.alpha3ToAlpha2(upper);
  return undefined;
}

/** Every ISO 3166-1 code the API takes, upper case, for the API reference. */
export const COUNTRY_CODES = {
  alpha2: Object.keys(countries.getAlpha2Codes()).sort(),
  alpha3: Object.keys(countries.getAlpha3Codes()).sort(),
};
