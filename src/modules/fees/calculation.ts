import { feePercentageDecimalsMax } from './limits.js';
/**
 * The fee arithmetic, pure and exact (docs/fees.md "Computation"): bigint minor units and a percentage in
 * millionths of the amount (0.25 % = 2500), never a float. FeeService.quote — and through it both the preview and
 * the payment — computes every fee here.
 */

/** 100 % of the amount, in the unit of `percentageMillionths`. */
export const millionthsPerWhole = 1_000_000n;
/** Millionths of the amount per percent: 1 % = 10,000 millionths. */
export const millionthsPerPercent = 10_000n;

export interface FeeRule {
  flatFeeMinor: bigint;
  /** The percentage of the amount in millionths of the amount (0.25 % = 2500n); 0n to 1,000,000n. */
  percentageMillionths: bigint;
  minFeeMinor: bigint | null;
  maxFeeMinor: bigint | null;
}

export interface FeeComputation {
  flatFeeMinor: bigint;
  percentageAmountMinor: bigint;
  /** flat + percentage amount, before the minimum and maximum. */
  rawTotalMinor: bigint;
  /** What is charged: the raw total clamped to [min, max]. */
  feeMinor: bigint;
  minApplied: boolean;
  maxApplied: boolean;
}

/**
 * amount × percentage, rounded half-up to the minor unit: 0.25 % of 2.00 EUR is 0.5 cent → 1 cent; of 1.98 EUR
 * 0.495 cent → 0. Both operands are non-negative, so "half-up" and "half away from zero" agree.
 */
export function percentageAmountMinor(amountMinor: bigint, percentageMillionths: bigint): bigint {
  if (amountMinor < 0n || percentageMillionths < 0n) throw new RangeError('amount and percentage must not be negative');
  return (amountMinor * percentageMillionths + millionthsPerWhole / 2n) / millionthsPerWhole;
}

export function computeFee(amountMinor: bigint, rule: FeeRule): FeeComputation {
  const percentageAmount = percentageAmountMinor(amountMinor, rule.percentageMillionths);
  const rawTotal = rule.flatFeeMinor + percentageAmount;
  let fee = rawTotal;
  let minApplied = false;
  let maxApplied = false;
  if (rule.minFeeMinor !== null && fee < rule.minFeeMinor) {
    fee = rule.minFeeMinor;
    minApplied = true;
  }
  // A schedule never has min > max (checked when set and by the database), so at most one of the two applies.
  if (rule.maxFeeMinor !== null && fee > rule.maxFeeMinor) {
    fee = rule.maxFeeMinor;
    maxApplied = true;
  }
  return { flatFeeMinor: rule.flatFeeMinor, percentageAmountMinor: percentageAmount, rawTotalMinor: rawTotal, feeMinor: fee, minApplied, maxApplied };
}

/** Millionths → the percentage as an exact decimal string without trailing zeros: 2500n → "0.25", 1000000n → "100". */
export function formatPercentage(millionths: bigint): string {
  const whole = millionths / millionthsPerPercent;
  const fraction = (millionths % millionthsPerPercent).toString().padStart(feePercentageDecimalsMax, '0').replace(/0+$/, '');
  return fraction === '' ? whole.toString() : `${whole}.${fraction}`;
}

/**
 * A percentage written as a plain decimal ("0.25") → millionths (2500n), exactly. Null when it is not a plain
 * decimal with at most four decimals; the range (0-100 %) is the caller's to check.
 */
export function parsePercentage(text: string): bigint | null {
  const match = /^(\d{1,3})(?:\.(\d{1,4}))?$/.exec(text);
  if (!match) return null;
  const [, whole = '0', fraction = ''] = match;
  return BigInt(whole) * millionthsPerPercent + BigInt(fraction.padEnd(feePercentageDecimalsMax, '0'));
}
