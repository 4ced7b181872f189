import { otcRateDecimals } from '../../config/limits.js';
import { scaleOf, type CryptoAsset } from '../../ledger/assets.js';

/**
 * The exact arithmetic of a quote (docs/otc.md "Rounding"). Rates are integers of 10^-8 units of the asset per EUR;
 * amounts are base units. Every division rounds down: the customer's rate is the mid rate less the spread, rounded
 * down to 8 decimals, and an amount converted at a rate is rounded down to the asset's scale. No floating point.
 */

const rateUnit = 10n ** BigInt(otcRateDecimals);
const centsPerEur = 100n;
const basisPoints = 10_000n;

/** The rate the customer gets: the mid rate less `spreadBps` basis points, rounded down. */
export function customerRate(midRate: bigint, spreadBps: number): bigint {
  return (midRate * (basisPoints - BigInt(spreadBps))) / basisPoints;
}

/** EUR cents converted at `rate` into base units of `asset`, rounded down. */
export function convert(sourceCents: bigint, rate: bigint, asset: CryptoAsset): bigint {
  return (sourceCents * rate * 10n ** BigInt(scaleOf(asset))) / (centsPerEur * rateUnit);
}

/** A rate as a decimal string with its 8 decimals (`108000000n` → "1.08000000"). */
export function formatRate(rate: bigint): string {
  const digits = rate.toString().padStart(otcRateDecimals + 1, '0');
  return `${digits.slice(0, -otcRateDecimals)}.${digits.slice(-otcRateDecimals)}`;
}
