/** Exact money: bigint minor units inside, formatted only at the edge (DESIGN §5). */

export const currencyDecimals = { USD: 2, EUR: 2, GBP: 2 } as const;
export type Currency = keyof typeof currencyDecimals;

/** Minor units → decimal string without float arithmetic: 1234n EUR → "12.34", -5n → "-0.05". */
export function formatDecimal(minor: bigint, currency: Currency): string {
  const decimals = currencyDecimals[currency];
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals);
  return `${negative ? '-' : ''}${whole}${decimals > 0 ? `.${fraction}` : ''}`;
}

/**
 * Minor units → the JSON number spec §2 asks for (fiat `balance`, transaction `amount`). The number is parsed
 * from the exact decimal string, so it is the double nearest to the true value and prints back as that string.
 */
export function toJsonNumber(minor: bigint, currency: Currency): number {
  return Number(formatDecimal(minor, currency));
}
