/**
 * Crypto settlement arithmetic, exact and pure (workflow code uses it): how a received amount compares with
 * the expected one, and what it is worth in fiat at the rate locked when the transaction was quoted.
 * All amounts are integers of base units (crypto) or minor units (fiat); every conversion rounds down.
 */
import { parseUnits } from './units';

export type PaymentStatus = 'FULLPAID' | 'OVERPAID' | 'UNDERPAID';

/** The quoted side of a crypto transaction: expected crypto and the fiat it is worth. */
export interface LockedRate {
  decimals: number;
  expectedUnits: string;
  fiatMinor: string;
  fiatDecimals: number;
}

export interface ToleranceSettings {
  /** In the asset's own units. */
  assetTolerance: string | null;
  /** A fiat amount in major units of the transaction's currency. */
  fiatTolerance: string | null;
}

export function classify(paid: bigint, expected: bigint, tolerance: bigint): PaymentStatus {
  const difference = paid - expected;
  if ((difference < 0n ? -difference : difference) <= tolerance) return 'FULLPAID';
  return paid > expected ? 'OVERPAID' : 'UNDERPAID';
}

/** `units` of crypto in fiat minor units at the locked rate, rounded down. */
export function fiatValue(units: bigint, rate: LockedRate): bigint {
  const expected = BigInt(rate.expectedUnits);
  return expected === 0n ? 0n : (units * BigInt(rate.fiatMinor)) / expected;
}

/** Fiat minor units in crypto base units at the locked rate, rounded down. */
export function cryptoValue(fiatMinor: bigint, rate: LockedRate): bigint {
  const fiat = BigInt(rate.fiatMinor);
  return fiat === 0n ? 0n : (fiatMinor * BigInt(rate.expectedUnits)) / fiat;
}

/**
 * The tolerance in the asset's base units: the merchant's setting for this asset when there is one, else
 * its fiat tolerance converted at the locked rate, else none. Finer amounts than the unit are dropped.
 */
export function toleranceUnits(settings: ToleranceSettings, rate: LockedRate): bigint {
  if (settings.assetTolerance !== null)
    return parseUnits(truncate(settings.assetTolerance, rate.decimals), rate.decimals) ?? 0n;
  if (settings.fiatTolerance !== null) {
    const fiat = parseUnits(truncate(settings.fiatTolerance, rate.fiatDecimals), rate.fiatDecimals) ?? 0n;
    return cryptoValue(fiat, rate);
  }
  return 0n;
}

/**
 * What a settled payment is worth in fiat minor units: the quoted amount when paid in full (within the
 * tolerance); the received amount at the locked rate for an accepted underpayment, never the quoted
 * amount; for an overpayment, the quoted amount plus the excess at the locked rate when the excess is kept
 * for the merchant (`creditExcess`), else the quoted amount.
 */
export function settledFiat(
  status: PaymentStatus,
  paidUnits: bigint,
  rate: LockedRate,
  creditExcess: boolean,
): bigint {
  if (status === 'UNDERPAID' || (status === 'OVERPAID' && creditExcess)) return fiatValue(paidUnits, rate);
  return BigInt(rate.fiatMinor);
}

/** Drops decimals beyond `decimals` (rounds down). */
function truncate(decimal: string, decimals: number): string {
  const [whole, fraction = ''] = decimal.split('.');
  const kept = fraction.slice(0, decimals);
  return kept ? `${whole}.${kept}` : whole!;
}
