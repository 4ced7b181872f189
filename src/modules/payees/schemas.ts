import { Type, type Static } from 'typebox';
import { CountryCode, Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { fiatCurrencies } from '../../ledger/assets.js';
import * as limits from './limits.js';

/**
 * docs/spec.md §4 POST /payees lists the fields but shows no required flags or constraints ("not shown"); the choices
 * here are explained in docs/payees.md. The rules that need more than a schema (IBAN check digits, BIC country,
 * ABA checksum, which details go together) live in bank-details.ts.
 */

/** A required free-text field. */
const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
/** An optional free-text field; an empty string is taken as absent, as web forms send it. */
const OptionalText = (maxLength: number, description?: string) =>
  Type.Optional(Type.String({ maxLength, description: description ?? 'Empty string is the same as leaving the field out' }));

const Bic = Type.String({
  minLength: limits.bicLengthMin,
  maxLength: limits.bicLengthMax,
  pattern: '^[A-Za-z0-9]{8}([A-Za-z0-9]{3})?$',
  examples: ['DEUTDEFF'],
  description: 'BIC / SWIFT code, 8 or 11 characters (ISO 9362); stored in upper case',
});

const PayeeAddressBody = Type.Object(
  {
    line1: Text(limits.payeeAddressLineLengthMax),
    line2: OptionalText(limits.payeeAddressLineLengthMax),
    city: Text(limits.payeeCityLengthMax),
    postalCode: OptionalText(limits.payeePostalCodeLengthMax, 'Optional: several countries have no postal codes'),
    stateRegion: OptionalText(limits.payeeStateRegionLengthMax),
    country: CountryCode,
  },
  { additionalProperties: false, description: "The payee's own address; SWIFT and SEPA carry at least its city and country" },
);

const PayeeBankDetailsBody = Type.Object(
  {
    iban: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: limits.ibanInputLengthMax,
        pattern: '^[A-Za-z0-9 ]+$',
        examples: ['DE89 3704 0044 0532 0130 00'],
        description: 'ISO 13616 IBAN, electronic or printed form (spaces are removed, letters upper-cased). Makes a EUR payee.',
      }),
    ),
    bic: Type.Optional(Bic),
    sortCode: Type.Optional(
      Type.String({
        minLength: limits.ukSortCodeDigits,
        maxLength: limits.ukSortCodeInputLengthMax,
        pattern: '^([0-9]{6}|[0-9]{2}-[0-9]{2}-[0-9]{2})$',
        examples: ['12-34-56'],
        description: 'UK sort code, 6 digits, optionally as 12-34-56; with accountNumber makes a GBP payee',
      }),
    ),
    accountNumber: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: limits.swiftAccountNumberLengthMax,
        pattern: '^[A-Za-z0-9]+$',
        description: '8 digits with sortCode (UK), 4-17 digits with routingNumber (US), 1-34 letters or digits with bic alone (SWIFT); not sent with an IBAN',
      }),
    ),
    routingNumber: Type.Optional(
      Type.String({
        minLength: limits.usRoutingNumberDigits,
        maxLength: limits.usRoutingNumberDigits,
        pattern: '^[0-9]{9}$',
        examples: ['021000021'],
        description: 'US ABA routing number, 9 digits with a valid checksum; with accountNumber makes a USD payee',
      }),
    ),
    accountHolderName: Type.Optional(Type.String({ minLength: 1, maxLength: limits.payeeNameLengthMax, description: 'Default: the payee name' })),
    bankName: OptionalText(limits.payeeNameLengthMax),
    bankAddressLine1: OptionalText(limits.payeeAddressLineLengthMax),
    bankAddressCity: OptionalText(limits.payeeCityLengthMax),
    bankAddressPostalCode: OptionalText(limits.payeePostalCodeLengthMax),
    bankAddressCountry: Type.Optional(CountryCode),
    intermediaryBicSwift: Type.Optional(Bic),
    intermediaryBankName: OptionalText(limits.payeeNameLengthMax),
    intermediaryBankAddressLine1: OptionalText(limits.payeeAddressLineLengthMax),
    intermediaryBankAddressCity: OptionalText(limits.payeeCityLengthMax),
    intermediaryBankAddressPostalCode: OptionalText(limits.payeePostalCodeLengthMax),
    intermediaryBankAddressCountry: Type.Optional(CountryCode),
  },
  {
    additionalProperties: false,
    description: 'Exactly one of: iban (EUR); sortCode + accountNumber (GBP); routingNumber + accountNumber (USD); accountNumber + bic (SWIFT, currency from `currency`)',
  },
);
export type PayeeBankDetailsInput = Static<typeof PayeeBankDetailsBody>;

/** docs/spec.md §4 POST /payees. */
export const CreatePayeeBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: limits.payeeNameLengthMax, description: 'Who is paid; not blank' }),
    address: PayeeAddressBody,
    bankDetails: PayeeBankDetailsBody,
    endUserId: Type.Optional(Uuid),
    umbrellaLinkId: Type.Optional(Uuid),
    currency: Type.Optional(
      StringEnum(fiatCurrencies, {
        description: 'Additive. The currency of a SWIFT payee identified by accountNumber + bic (default USD); for the other rails it is implied by the bank details and may only repeat it',
      }),
    ),
  },
  {
    title: 'CreatePayeeRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'Müller Logistik GmbH',
        address: { line1: 'Hauptstraße 12', city: 'Berlin', postalCode: '10115', country: 'DE' },
        bankDetails: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' },
      },
    ],
  },
);
export type CreatePayeeInput = Static<typeof CreatePayeeBody>;

const BankAddress = Type.Object(
  {
    line1: Nullable(Type.String()),
    city: Nullable(Type.String()),
    postal_code: Nullable(Type.String()),
    country_code: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

const IntermediaryBank = Type.Object(
  {
    swift: Nullable(Type.String()),
    name: Nullable(Type.String()),
    address_line1: Nullable(Type.String()),
    city: Nullable(Type.String()),
    postal_code: Nullable(Type.String()),
    country_code: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * docs/spec.md §2 payee record. Additive (docs/spec.md §9 rule 6): iban, routing_number, account_holder_name, bank_address,
 * intermediary_bank and updated_at. Details a payee's rail does not use are null (docs/payees.md).
 */
export const Payee = Type.Object(
  {
    id: Uuid,
    fr_payee_id: Type.String({ description: 'Provider id, prefix pay_' }),
    payee_name: Type.String(),
    currency: StringEnum(fiatCurrencies, { description: 'Derived from the bank details: IBAN → EUR, sort code → GBP, routing number → USD' }),
    status: Type.String({ description: 'active or inactive (docs/payees.md "Status")' }),
    account_number: Nullable(Type.String({ description: 'GBP and USD payees' })),
    sort_code: Nullable(Type.String({ description: 'GBP payees: 6 digits' })),
    swift: Nullable(Type.String({ description: 'BIC, when given' })),
    bank_name: Nullable(Type.String()),
    address_line1: Type.String(),
    address_line2: Nullable(Type.String()),
    city: Type.String(),
    state_region: Nullable(Type.String()),
    postal_code: Nullable(Type.String()),
    country_code: Type.String({ description: 'ISO 3166-1 alpha-2' }),
    end_user_id: Nullable(Uuid),
    requires_vop: Type.Boolean({ description: 'Verification of Payee applies: EUR payees with an IBAN of a SEPA country' }),
    fr_owner_business_id: Type.String(),
    iban: Nullable(Type.String({ description: 'EUR payees, electronic form' })),
    routing_number: Nullable(Type.String({ description: 'USD payees' })),
    account_holder_name: Type.String(),
    bank_address: Nullable(BankAddress),
    intermediary_bank: Nullable(IntermediaryBank),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Payee', additionalProperties: false },
);
export type PayeeRecord = Static<typeof Payee>;

export const PayeeParams = Type.Object({ id: Uuid }, { additionalProperties: false });

/** docs/spec.md §3 shows only `active`; the provider may deactivate a payee, and reactivate it (docs/payees.md "Status"). */
export const payeeStatuses = ['active', 'inactive'] as const;

/** Sandbox: the status the simulated provider gives the payee (any case). */
export const PayeeStatusBody = Type.Object({ status: StringEnum(payeeStatuses) }, { title: 'SandboxSetPayeeStatusRequest', additionalProperties: false });
