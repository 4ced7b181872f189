import { scaleOf, type Asset } from './assets.js';

/** Exact money: bigint base units inside, formatted only at the edge (docs/conventions.md, Code). */

/** Base units → decimal string without float arithmetic: 1234n EUR → "12.34", -5n → "-0.05", 1500000n USDC → "1.500000". */
export function formatDecimal(units: bigint, asset: Asset): string {
  const decimals = scaleOf(asset);
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals);
  return `${negative ? '-' : ''}${whole}${decimals > 0 ? `.${fraction}` : ''}`;
}

/**
 * Base units → the JSON number docs/spec.md §2 asks for (fiat `balance`, transaction `amount`). The number is parsed from
 * the exact decimal string, so it is the double nearest to the true value and prints back as that string. Exact for
 * every fiat amount (2 decimals, far below 2^53 cents); crypto amounts go out as decimal strings where the spec
 * allows (docs/assets.md).
 */
export function toJsonNumber(units: bigint, asset: Asset): number {
  return Number(formatDecimal(units, asset));
}

/**
 * Base units → the shortest plain decimal text of the amount (`1230n` EUR → "12.3", `500n` → "5", `0n` → "0"),
 * never with an exponent: how a balance is written into a stored JSON payload as a number. PostgreSQL's
 * `trim_scale(units / 10^scale)` writes exactly this text (migration 0006), so both databases store the same bytes.
 */
export function plainDecimalText(units: bigint, asset: Asset): string {
  const text = formatDecimal(units, asset);
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}
