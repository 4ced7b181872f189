import { dashboardCryptoDecimalsMin } from '../config/limits.js';
import { parseAmount } from '../ledger/amounts.js';
import { fiatCurrencies, scaleOf, assetOf, type Asset } from '../ledger/assets.js';
import { formatDecimal } from '../ledger/money.js';

/**
 * Amounts as a person reads them (docs/dashboard.md "How amounts and times read"): thousands separated, fiat to its
 * two decimals (`4,679.80 GBP`), crypto to its significant decimals but at least two (`2,500.00 USDC`,
 * `0.015 USDC`), the asset code after. The amount comes as the API answers it — a JSON number for fiat, a decimal
 * string for crypto — and goes to exact base units first (the API's own parser: a number by the digits it prints,
 * never through float arithmetic), so what is shown is exactly what the API holds.
 */

/** U+2212, the minus sign: the same width as `+` in tabular figures, and read as "minus". */
const minusSign = '\u2212';

function isFiat(asset: Asset): boolean {
  return (fiatCurrencies as readonly string[]).includes(asset);
}

function assetOrUndefined(code: string): Asset | undefined {
  try {
    return assetOf(code);
  } catch {
    return undefined;
  }
}

/** `1234567.5` → `1,234,567.5`: separators in the whole part only. */
function grouped(decimal: string): string {
  const [whole = '', fraction] = decimal.split('.');
  const wholeGrouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction === undefined ? wholeGrouped : `${wholeGrouped}.${fraction}`;
}

/** A decimal without its trailing zeros, kept to at least `decimalsMin` decimals: "2500.000000" → "2500.00", "0.015000" → "0.015". */
function trimmedTo(decimal: string, decimalsMin: number): string {
  const [whole, fraction = ''] = decimal.split('.');
  return `${whole}.${fraction.replace(/0+$/, '').padEnd(decimalsMin, '0')}`;
}

/** The magnitude in words and figures, and whether it was below zero. */
function magnitudeText(amount: number | string, asset: Asset): { text: string; negative: boolean } {
  const raw = String(amount);
  const negative = raw.startsWith('-');
  const units = parseAmount(typeof amount === 'number' ? Math.abs(amount) : raw.replace(/^-/, ''), asset);
  let decimal = formatDecimal(units, asset);
  if (!isFiat(asset) && scaleOf(asset) > dashboardCryptoDecimalsMin) decimal = trimmedTo(decimal, dashboardCryptoDecimalsMin);
  return { text: grouped(decimal), negative: negative && units !== 0n };
}

/**
 * The amount as a plain decimal with the asset's decimals (`4679.8, 'GBP'` → `4679.80`; `'0.015000'`, USDC, stays
 * `0.015000`): what a spreadsheet reads exactly, for the CSV export. An unknown asset code leaves it as given.
 */
export function plainAmountText(amount: number | string, assetCode: string): string {
  const asset = assetOrUndefined(assetCode);
  if (asset === undefined) return String(amount);
  const raw = String(amount);
  const units = parseAmount(typeof amount === 'number' ? Math.abs(amount) : raw.replace(/^-/, ''), asset);
  return `${raw.startsWith('-') && units !== 0n ? '-' : ''}${formatDecimal(units, asset)}`;
}

/** `4679.8, 'GBP'` → `4,679.80 GBP`; a negative amount keeps its sign (−). An unknown asset code shows as given. */
export function moneyText(amount: number | string, assetCode: string): string {
  const asset = assetOrUndefined(assetCode);
  if (asset === undefined) return `${String(amount)} ${assetCode}`;
  const { text, negative } = magnitudeText(amount, asset);
  return `${negative ? minusSign : ''}${text} ${asset}`;
}

/** An amount that moved in or out of an account: `+250.00 EUR` in, `−40.00 EUR` out (the sign is the cue, not the colour). */
export function signedMoneyText(amount: number | string, assetCode: string, direction: 'incoming' | 'outgoing'): string {
  const text = moneyText(amount, assetCode).replace(minusSign, '');
  return `${direction === 'incoming' ? '+' : minusSign}${text}`;
}
