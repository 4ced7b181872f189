import {
  ValidationErrorsBIC,
  ValidationErrorsIBAN,
  electronicFormatIBAN,
  isSEPACountry,
  validateBIC,
  validateIBAN,
} from 'ibantools';
import type { FieldError } from '../../errors.js';
import type { FiatCurrency } from '../../ledger/assets.js';
import { ukAccountNumberDigits, usAccountNumberDigitsMax, usAccountNumberDigitsMin } from './limits.js';
import type { PayeeBankDetailsInput } from './schemas.js';

/**
 * What the payment rails need of a payee's bank details, and the currency those details imply. Spec §4 sends no
 * currency for a payee, so it is derived here (docs/payees.md):
 *
 * - `iban` → EUR. The payee is paid by SEPA credit transfer when the IBAN's country is in SEPA (then Verification
 *   of Payee applies), otherwise over SWIFT, which needs the `bic`.
 * - `sortCode` + `accountNumber` → GBP (Faster Payments / Bacs).
 * - `routingNumber` + `accountNumber` → USD (ACH / Fedwire).
 * - `accountNumber` + `bic` alone → a SWIFT payee outside the IBAN countries, in the currency the request names
 *   (default USD, the currency of most such wires).
 *
 * Exactly one identification applies; a mix would leave the rail, and so the currency, ambiguous.
 */

export interface ResolvedBankDetails {
  currency: FiatCurrency;
  requiresVop: boolean;
  /** Paid over SWIFT only: an IBAN outside SEPA, or an account number with a BIC. */
  swiftOnly: boolean;
  /** Electronic form: no spaces, upper case. */
  iban: string | null;
  /** Upper case. */
  bic: string | null;
  /** Six digits, without hyphens. */
  sortCode: string | null;
  accountNumber: string | null;
  routingNumber: string | null;
}

const railFields = ['iban', 'sortCode', 'routingNumber'] as const;
const railsSentence = 'iban (EUR), sortCode with accountNumber (GBP), routingNumber with accountNumber (USD), or accountNumber with bic (SWIFT)';
/** The currency of a SWIFT payee identified by account number and BIC when the request names none. */
export const swiftPayeeDefaultCurrency: FiatCurrency = 'USD';
const digitsOnly = /^[0-9]+$/;

/**
 * ABA routing number: 9 digits whose weighted sum 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) is a multiple of 10.
 * The checksum alone accepts 000000000, so the first two digits must also be a Federal Reserve routing symbol
 * of a bank: 01-12 (Federal Reserve districts), 21-32 (thrift institutions) or 61-72 (electronic).
 */
/** The Federal Reserve routing symbols of banks, first and last of each range. */
const bankRoutingSymbols = [
  [1, 12],
  [21, 32],
  [61, 72],
] as const;

export function abaRoutingNumberProblem(routingNumber: string): string | null {
  if (!/^[0-9]{9}$/.test(routingNumber)) return 'must be 9 digits';
  const prefix = Number(routingNumber.slice(0, 2));
  const bankPrefix = bankRoutingSymbols.some(([first, last]) => prefix >= first && prefix <= last);
  if (!bankPrefix) return 'must start with a Federal Reserve routing symbol of a bank (01-12, 21-32 or 61-72)';
  const weights = [3, 7, 1, 3, 7, 1, 3, 7, 1];
  const sum = [...routingNumber].reduce((total, digit, index) => total + Number(digit) * (weights[index] ?? 0), 0);
  return sum % 10 === 0 ? null : 'fails the ABA routing number checksum';
}

function ibanProblem(iban: string): string | null {
  const { valid, errorCodes } = validateIBAN(iban);
  if (valid) return null;
  if (errorCodes.includes(ValidationErrorsIBAN.NoIBANProvided)) return 'must not be blank';
  if (errorCodes.includes(ValidationErrorsIBAN.NoIBANCountry)) return 'does not start with the code of a country that uses IBANs';
  if (errorCodes.includes(ValidationErrorsIBAN.WrongBBANLength)) return `does not have the length of an IBAN of ${iban.slice(0, 2)}`;
  if (errorCodes.includes(ValidationErrorsIBAN.WrongBBANFormat)) return `does not have the format of an IBAN of ${iban.slice(0, 2)}`;
  if (errorCodes.includes(ValidationErrorsIBAN.WrongAccountBankBranchChecksum)) return 'has a wrong national check digit';
  return 'has wrong check digits (ISO 13616 mod 97)';
}

function bicProblem(bic: string): string | null {
  const { valid, errorCodes } = validateBIC(bic);
  if (valid) return null;
  if (errorCodes.includes(ValidationErrorsBIC.NoBICCountry)) return 'has no valid country code in characters 5-6';
  return 'is not a valid BIC: 4 letters (bank), 2 letters (country), 2 characters (location), optionally 3 (branch)';
}

/**
 * Checks the bank details and derives the rail's currency. Every problem is reported at once as a field error
 * under `/bankDetails`; `resolved` is null when there is any.
 */
export function resolveBankDetails(
  details: PayeeBankDetailsInput,
  requestedCurrency?: FiatCurrency,
): { errors: FieldError[]; resolved: ResolvedBankDetails | null } {
  const errors: FieldError[] = [];
  const at = (field: string, reason: string) => errors.push({ location: 'body', path: `/bankDetails/${field}`, reason });

  const bic = details.bic?.toUpperCase() ?? null;
  if (bic !== null) {
    const problem = bicProblem(bic);
    if (problem) at('bic', problem);
  }
  if (details.intermediaryBicSwift !== undefined) {
    const problem = bicProblem(details.intermediaryBicSwift.toUpperCase());
    if (problem) at('intermediaryBicSwift', problem);
  }

  const given = railFields.filter((field) => details[field] !== undefined);
  const accountNumber = details.accountNumber ?? null;
  let resolved: ResolvedBankDetails | null = null;
  const none = { iban: null, sortCode: null, routingNumber: null, accountNumber: null };

  if (given.length > 1) {
    for (const field of given) {
      const others = given.filter((other) => other !== field).join(' and ');
      at(field, `cannot be combined with ${others}: a payee is paid on one rail, identified by ${railsSentence}`);
    }
  } else if (given.length === 0) {
    if (accountNumber === null) errors.push({ location: 'body', path: '/bankDetails', reason: `must identify the account by ${railsSentence}` });
    else if (bic === null) at('accountNumber', 'needs sortCode (UK, GBP), routingNumber (US, USD) or bic (SWIFT) beside it');
    else resolved = { ...none, currency: requestedCurrency ?? swiftPayeeDefaultCurrency, requiresVop: false, swiftOnly: true, bic, accountNumber };
  } else if (details.iban !== undefined) {
    const iban = electronicFormatIBAN(details.iban) ?? '';
    const problem = ibanProblem(iban);
    if (problem) at('iban', problem);
    if (accountNumber !== null) at('accountNumber', 'must be left out with an iban, which already contains the account number');
    const country = iban.slice(0, 2);
    const sepa = problem === null && isSEPACountry(country);
    if (problem === null && !sepa && bic === null) at('bic', `is required for an IBAN of ${country}: outside SEPA the payee is paid over SWIFT`);
    resolved = { ...none, currency: 'EUR', requiresVop: sepa, swiftOnly: !sepa, iban, bic };
  } else if (details.sortCode !== undefined) {
    if (accountNumber === null) at('accountNumber', 'is required with sortCode');
    else if (accountNumber.length !== ukAccountNumberDigits || !digitsOnly.test(accountNumber)) at('accountNumber', `must be ${ukAccountNumberDigits} digits with a UK sort code`);
    resolved = { ...none, currency: 'GBP', requiresVop: false, swiftOnly: false, bic, sortCode: details.sortCode.replace(/-/g, ''), accountNumber };
  } else if (details.routingNumber !== undefined) {
    const problem = abaRoutingNumberProblem(details.routingNumber);
    if (problem) at('routingNumber', problem);
    if (accountNumber === null) at('accountNumber', 'is required with routingNumber');
    else if (accountNumber.length < usAccountNumberDigitsMin || accountNumber.length > usAccountNumberDigitsMax || !digitsOnly.test(accountNumber)) {
      at('accountNumber', `must be ${usAccountNumberDigitsMin}-${usAccountNumberDigitsMax} digits with a US routing number`);
    }
    resolved = { ...none, currency: 'USD', requiresVop: false, swiftOnly: false, bic, routingNumber: details.routingNumber, accountNumber };
  }
  // `currency` names the currency of a SWIFT payee; for the other rails it is implied and may only repeat it.
  if (resolved !== null && requestedCurrency !== undefined && resolved.currency !== requestedCurrency) {
    errors.push({ location: 'body', path: '/currency', reason: `must be ${resolved.currency}, the currency of these bank details, or be left out` });
  }
  return errors.length > 0 ? { errors, resolved: null } : { errors, resolved };
}
