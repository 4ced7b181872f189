import { composeIBAN } from 'ibantools';
import type { IbanCountry } from '../banking.js';

/** The sandbox bank's fixed identifiers; the location code's second character 0 marks a test BIC. */
const sandboxBankCode = 'SNDX';
export const sandboxSortCode = '040075';
/** National bank codes inside each country's BBAN (ISO 13616 registry formats). */
const nationalBankCode: Record<IbanCountry, string> = { DE: '37040044', DK: '5301', GB: `${sandboxBankCode}${sandboxSortCode}`, LU: '099' };
/** Digits of the domestic account number inside each country's BBAN. */
export const domesticAccountDigits: Record<IbanCountry, number> = { DE: 10, DK: 10, GB: 8, LU: 13 };

export function sandboxBic(country: IbanCountry): string {
  return `${sandboxBankCode}${country}S0`;
}

/** An IBAN whose check digits are computed per ISO 13616 (mod 97) by the IBAN library. */
export function sandboxIban(country: IbanCountry, accountNumber: string): string {
  const iban = composeIBAN({ countryCode: country, bban: `${nationalBankCode[country]}${accountNumber}` });
  if (!iban) throw new Error(`could not compose an IBAN for ${country}`);
  return iban;
}

/** ABA routing number: 8 digits and a check digit making 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) ≡ 0 (mod 10). */
function abaRoutingNumber(firstEightDigits: string): string {
  const digits = [...firstEightDigits].map(Number);
  const weights = [3, 7, 1, 3, 7, 1, 3, 7];
  const sum = digits.reduce((total, digit, index) => total + digit * (weights[index] ?? 0), 0);
  return `${firstEightDigits}${(10 - (sum % 10)) % 10}`;
}

export const sandboxRoutingNumber = abaRoutingNumber('02100002');
