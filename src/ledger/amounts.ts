import { scaleOf, type Asset } from './assets.js';
import { decimalTextLengthMax } from '../config/limits.js';

/**
 * Exact parsing of amounts into bigint base units of an asset (DESIGN §2, §5). No floating-point arithmetic happens here:
 * a JSON number is turned into its shortest decimal string first (String(n), the digits JavaScript prints and
 * the ones a client typed), and those digits are parsed.
 */

/** Why an amount was refused; the message is a reason to put after the field name ("must have at most 2 …"). */
export class AmountError extends Error {
  override name = 'AmountError';
}

/** Operator input and decimal-string fields: digits, optionally a point and more digits. No sign, no exponent. */
const plainDecimal = /^(\d+)(?:\.(\d+))?$/;
/** What String(n) prints for a finite number: an optional sign, digits, a fraction, an exponent (1e-7, 1e+21). */
const numberText = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/;

function tooManyDecimals(asset: Asset): AmountError {
  return new AmountError(`must have at most ${scaleOf(asset)} decimal places (${asset})`);
}

/**
 * digits × 10^(−scale) → base units of the asset, or an error when the value has more decimals than the asset's
 * scale (trailing zeros do not count: "0.200" is 20 base units of EUR).
 */
function toUnits(digits: string, scale: number, asset: Asset): bigint {
  const decimals = scaleOf(asset);
  const value = BigInt(digits);
  if (scale <= decimals) return value * 10n ** BigInt(decimals - scale);
  const divisor = 10n ** BigInt(scale - decimals);
  if (value % divisor !== 0n) throw tooManyDecimals(asset);
  return value / divisor;
}

/**
 * An amount → base units of the asset, exactly: `parseAmount(12.34, 'EUR')` and `parseAmount('12.34', 'EUR')` are 1234n;
 * `parseAmount(1.234, 'EUR')`, `parseAmount(1e-7, 'EUR')` and `parseAmount(0.1 + 0.2, 'EUR')` are refused (more
 * decimals than the currency has). Negative values, NaN and infinities are refused. A string must be a plain
 * decimal (`12`, `12.3`, `12.34`): no sign, exponent, spaces or thousands separators. Zero is accepted; range
 * checks (> 0, at most a limit) are the caller's.
 * @throws AmountError with a reason suitable for a validation message.
 */
export function parseAmount(value: number | string, asset: Asset): bigint {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new AmountError('must be a finite number');
    const match = numberText.exec(String(value));
    if (!match) throw new AmountError('must be a decimal number');
    const [, sign, whole = '', fraction = '', exponent = '0'] = match;
    if (sign === '-') throw new AmountError('must not be negative');
    return toUnits(`${whole}${fraction}`, fraction.length - Number(exponent), asset);
  }
  if (value.length > decimalTextLengthMax) throw new AmountError('is too long');
  const match = plainDecimal.exec(value);
  if (!match && plainDecimal.test(value.slice(1)) && value.startsWith('-')) throw new AmountError('must not be negative');
  if (!match) throw new AmountError(`must be a decimal number such as 12.34, without sign or exponent`);
  const [, whole = '', fraction = ''] = match;
  return toUnits(`${whole}${fraction}`, fraction.length, asset);
}
