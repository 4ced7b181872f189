// Limits of POST /payees. Spec §4 shows no required flags or lengths for payees; these follow the payment
// messages a payee's details end up in (ISO 20022 pain.001 / pacs.008, the format of SEPA and SWIFT CBPR+),
// so nothing accepted here has to be cut short by a rail. docs/payees.md explains each.

/** Payee, account holder and bank names: ISO 20022 `Nm` is Max140Text. */
export const payeeNameLengthMax = 140;
/** Street lines: ISO 20022 `AdrLine` / `StrtNm` are Max70Text. */
export const payeeAddressLineLengthMax = 70;
/** City: ISO 20022 `TwnNm` is Max35Text. */
export const payeeCityLengthMax = 35;
/** Postal code: ISO 20022 `PstCd` is Max16Text. */
export const payeePostalCodeLengthMax = 16;
/** State or region: ISO 20022 `CtrySubDvsn` is Max35Text. */
export const payeeStateRegionLengthMax = 35;

/** ISO 13616: an IBAN has at most 34 characters in electronic form. */
export const ibanLengthMax = 34;
/** The printed form of the longest IBAN: 34 characters in groups of four, separated by single spaces. */
export const ibanInputLengthMax = ibanLengthMax + Math.ceil(ibanLengthMax / 4) - 1;

/** UK: a sort code is 6 digits, an account number 8 (Faster Payments and Bacs). */
export const ukSortCodeDigits = 6;
export const ukAccountNumberDigits = 8;
/** US: an ABA routing number is 9 digits; account numbers are 4 to 17 digits (the Nacha DFI account field holds 17). */
export const usRoutingNumberDigits = 9;
export const usAccountNumberDigitsMin = 4;
export const usAccountNumberDigitsMax = 17;
/** Elsewhere, an account identifier in a SWIFT message is ISO 20022 `Othr/Id`, Max34Text. */
export const swiftAccountNumberLengthMax = 34;
/** A BIC is 8 or 11 characters (ISO 9362). */
export const bicLengthMin = 8;
export const bicLengthMax = 11;
/** A UK sort code as typed: 6 digits, or 8 characters with dashes (12-34-56). */
export const ukSortCodeInputLengthMax = 8;
