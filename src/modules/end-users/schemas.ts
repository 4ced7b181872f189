import { Type, type Static, type TSchema } from 'typebox';
import * as limits from '../../config/limits.js';
import { jsonLimitsKeyword } from '../../http/request-schema.js';
import { CountryCode, Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { ownershipPercentMax } from '../../config/limits.js';

/** docs/spec.md §4 leaves many inner shapes open; docs/end-users.md records each decision made here. */

const datePattern = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
const DateString = Type.String({ pattern: datePattern, description: 'YYYY-MM-DD, a real calendar date', examples: ['1990-04-12'] });
const Email = Type.String({ format: 'email', maxLength: limits.emailLengthMax });
const Text = (maxLength: number, minLength = 1) => Type.String({ minLength, maxLength });

const annualSalaryRanges = ['RANGE_0_TO_25000', 'RANGE_25000_TO_50000', 'RANGE_50000_TO_100000', 'RANGE_100000_TO_150000', 'ABOVE_150000'] as const;
const riskRatings = ['LOW', 'MEDIUM', 'HIGH'] as const;
const verificationMethods = ['hosted_kyc', 'pdf_upload', 'provider_websdk'] as const;
const businessPersonTypes = ['director', 'ubo', 'shareholder', 'signatory', 'authorised_representative'] as const;
const businessTypes = [
  'LIMITED_COMPANY',
  'PUBLIC_LIMITED_COMPANY',
  'LIMITED_LIABILITY_PARTNERSHIP',
  'PARTNERSHIP',
  'SOLE_TRADER',
  'CHARITY',
  'TRUST',
  'OTHER',
] as const;
const sectors = [
  'AGRICULTURE',
  'CONSTRUCTION',
  'CRYPTO_ASSETS',
  'EDUCATION',
  'FINANCIAL_SERVICES',
  'GAMBLING',
  'HEALTHCARE',
  'HOSPITALITY',
  'INFORMATION_TECHNOLOGY',
  'MANUFACTURING',
  'PROFESSIONAL_SERVICES',
  'REAL_ESTATE',
  'RETAIL',
  'TRANSPORTATION',
  'OTHER_PRODUCTS_SERVICES',
] as const;
/** The kinds of identity document: an identificationDocument's `type`, and a document's `documentKind` (docs/documents.md). */
export const identityDocumentKinds = ['passport', 'national_id', 'driving_licence', 'residence_permit'] as const;

/** docs/spec.md §4: address with line1, city, postalCode, country required; line2, state optional. */
const Address = Type.Object(
  {
    line1: Text(limits.addressLineLengthMax),
    line2: Type.Optional(Text(limits.addressLineLengthMax, 0)),
    city: Text(limits.cityLengthMax),
    state: Type.Optional(Text(limits.stateLengthMax, 0)),
    postalCode: Text(limits.postalCodeLengthMax),
    country: CountryCode,
  },
  { additionalProperties: false },
);

const Tags = Type.Array(Text(limits.tagLengthMax), { maxItems: limits.tagsMax });

/** Free-form JSON for the customer's own use: any values, bounded in keys, key length, depth and size. */
const Metadata = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  propertyNames: { minLength: 1, maxLength: limits.metadataKeyLengthMax },
  additionalProperties: {},
  maxProperties: limits.metadataKeysMax,
  [jsonLimitsKeyword]: { depthMax: limits.metadataDepthMax, bytesMax: limits.metadataBytesMax },
  description:
    `Any JSON object: at most ${limits.metadataKeysMax} keys of 1-${limits.metadataKeyLengthMax} characters, nested at most ` +
    `${limits.metadataDepthMax} levels deep (the object itself counts), at most ${limits.metadataBytesMax} bytes as JSON`,
});

const LinkedCryptoWallet = Type.Object(
  {
    coin: Text(20),
    walletAddress: Text(200),
    relationship: Type.Array(Text(50), { maxItems: limits.walletRelationshipsMax }),
  },
  { additionalProperties: false },
);
const LinkedCryptoWallets = Type.Array(LinkedCryptoWallet, { maxItems: limits.linkedCryptoWalletsMax });

/**
 * docs/spec.md §4 shows no inner fields of identificationDocument and reverseSolicitationAttestation: any JSON object within
 * bounds, whose fields listed here are checked when present; any other member is free-form and stored as sent.
 */
function OpenObject<T extends Record<string, TSchema>>(known: T, description: string) {
  return Type.Object(known, {
    additionalProperties: true,
    maxProperties: limits.openObjectKeysMax,
    [jsonLimitsKeyword]: { depthMax: limits.openObjectDepthMax, bytesMax: limits.openObjectBytesMax },
    description:
      `${description}. Any other member is stored as sent. At most ${limits.openObjectKeysMax} members, nested at most ` +
      `${limits.openObjectDepthMax} levels deep (the object itself counts), at most ${limits.openObjectBytesMax} bytes as JSON`,
  });
}

const IdentificationDocument = OpenObject(
  {
    type: Type.Optional(StringEnum(identityDocumentKinds)),
    number: Type.Optional(Text(100)),
    issuingCountry: Type.Optional(CountryCode),
    issueDate: Type.Optional(DateString),
    expiryDate: Type.Optional(DateString),
  },
  'Checked when present: type, number (1-100), issuingCountry, issueDate and expiryDate (real dates)',
);

const ReverseSolicitationAttestation = OpenObject(
  {
    accepted: Type.Optional(Type.Boolean({ description: 'Absent: not accepted' })),
    acceptedAt: Type.Optional(Timestamp),
    disclosureVersion: Type.Optional(Text(50)),
  },
  'Checked when present: accepted (boolean), acceptedAt (timestamp), disclosureVersion (1-50)',
);

const Report = Type.String({ minLength: 1, maxLength: limits.reportLengthMax, contentEncoding: 'base64', description: 'base64 of the report file' });
const ReportFileName = Type.String({ minLength: 1, maxLength: limits.reportFileNameLengthMax });

const commonOptional = {
  ipAddress: Type.Optional(Text(limits.ipAddressLengthMax)),
  tags: Type.Optional(Tags),
  signupAt: Type.Optional(Timestamp),
  metadata: Type.Optional(Metadata),
  linkedCryptoWallets: Type.Optional(LinkedCryptoWallets),
  umbrellaLinkId: Type.Optional(Uuid),
  onboarding_url_token: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: limits.onboardingUrlTokenLengthMax,
      description:
        'Any 1-100 characters. With verificationMethod hosted_kyc it names the hosted onboarding page: its URL is this token, percent-encoded, beside a secret the server adds (omit it and the server issues one; GET /end-users/{id}/onboarding-link gives the URL). Need not be unique.',
    }),
  ),
  providerReportBase64: Type.Optional(Report),
  providerReportFilename: Type.Optional(ReportFileName),
};

/** docs/spec.md §4 POST /end-users. */
export const CreateIndividualBody = Type.Object(
  {
    firstName: Text(limits.personNameLengthMax),
    lastName: Text(limits.personNameLengthMax),
    email: Email,
    dob: DateString,
    address: Address,
    middleName: Type.Optional(Text(limits.personNameLengthMax, 0)),
    phone: Type.Optional(Text(limits.phoneLengthMax)),
    birthCountry: Type.Optional(CountryCode),
    nationality: Type.Optional(CountryCode),
    identificationDocument: Type.Optional(IdentificationDocument),
    annualSalaryRange: Type.Optional(StringEnum(annualSalaryRanges)),
    riskRating: Type.Optional(StringEnum(riskRatings)),
    reverseSolicitationAttestation: Type.Optional(ReverseSolicitationAttestation),
    verificationMethod: Type.Optional(StringEnum(verificationMethods)),
    kycReportBase64: Type.Optional(Report),
    kycReportFilename: Type.Optional(ReportFileName),
    ...commonOptional,
  },
  {
    title: 'CreateEndUserRequest',
    additionalProperties: false,
    examples: [
      {
        firstName: 'Jane',
        lastName: 'Doe',
        email: 'jane.doe@example.com',
        dob: '1990-04-12',
        address: { line1: 'Hauptstraße 12', city: 'Berlin', postalCode: '10115', country: 'DE' },
        nationality: 'DE',
      },
    ],
  },
);
export type CreateIndividualInput = Static<typeof CreateIndividualBody>;

const BusinessPerson = Type.Object(
  {
    person: Type.Object(
      {
        firstName: Text(limits.personNameLengthMax),
        lastName: Text(limits.personNameLengthMax),
        dob: DateString,
        email: Email,
        address: Address,
        middleName: Type.Optional(Text(limits.personNameLengthMax, 0)),
        birthCountry: Type.Optional(CountryCode),
        phone: Type.Optional(Text(limits.phoneLengthMax)),
        nationality: Type.Optional(CountryCode),
      },
      { additionalProperties: false },
    ),
    types: Type.Array(StringEnum(businessPersonTypes), { minItems: 1, maxItems: businessPersonTypes.length, uniqueItems: true }),
    ownership: Type.Optional(Type.Number({ minimum: 0, maximum: ownershipPercentMax, description: 'Percentage of ownership, 0-100' })),
  },
  { additionalProperties: false },
);

/** docs/spec.md §4 POST /end-users/businesses (required flags decided in docs/end-users.md). */
export const CreateBusinessBody = Type.Object(
  {
    business: Type.Object(
      {
        companyName: Text(limits.companyNameLengthMax),
        registrationNumber: Text(limits.registrationNumberLengthMax),
        registrationDate: DateString,
        email: Email,
        incorporationCountry: CountryCode,
        registeredAddress: Address,
        tradingAddress: Type.Optional(Address),
        tradingName: Type.Optional(Text(limits.companyNameLengthMax)),
        website: Type.Optional(Type.String({ format: 'uri', maxLength: limits.websiteLengthMax })),
        phone: Type.Optional(Text(limits.phoneLengthMax)),
        businessType: Type.Optional(StringEnum(businessTypes, { description: 'Additive; default LIMITED_COMPANY' })),
      },
      { additionalProperties: false },
    ),
    businessPersons: Type.Array(BusinessPerson, { minItems: 1, maxItems: limits.businessPersonsMax }),
    sector: Type.Optional(StringEnum(sectors, { description: 'Default OTHER_PRODUCTS_SERVICES' })),
    kybReportBase64: Type.Optional(Report),
    kybReportFilename: Type.Optional(ReportFileName),
    ...commonOptional,
  },
  { title: 'CreateBusinessEndUserRequest', additionalProperties: false },
);
export type CreateBusinessInput = Static<typeof CreateBusinessBody>;

/** docs/spec.md §4 PATCH /end-users/{endUserId}: the listed fields, with the creation constraints; none given changes nothing. */
export const UpdateEndUserBody = Type.Object(
  {
    firstName: Type.Optional(Text(limits.personNameLengthMax)),
    middleName: Type.Optional(Text(limits.personNameLengthMax, 0)),
    lastName: Type.Optional(Text(limits.personNameLengthMax)),
    email: Type.Optional(Email),
    dob: Type.Optional(DateString),
    phone: Type.Optional(Text(limits.phoneLengthMax)),
    birthCountry: Type.Optional(CountryCode),
    nationality: Type.Optional(CountryCode),
    ipAddress: Type.Optional(Text(limits.ipAddressLengthMax)),
    tags: Type.Optional(Tags),
    signupAt: Type.Optional(Timestamp),
    metadata: Type.Optional(Metadata),
    linkedCryptoWallets: Type.Optional(LinkedCryptoWallets),
  },
  { title: 'UpdateEndUserRequest', additionalProperties: false },
);
export type UpdateEndUserInput = Static<typeof UpdateEndUserBody>;

const endUserStatuses = ['pending_verification', 'review_required', 'verified', 'rejected'] as const;
export type EndUserStatus = (typeof endUserStatuses)[number];

const nullableString = (schema: TSchema = Type.String()) => Nullable(schema);

/** docs/spec.md §2 end user record; business-only fields are null for individuals and vice versa. */
export const EndUser = Type.Object(
  {
    id: Uuid,
    fr_end_user_id: Type.String({ description: 'Provider id, prefix eu_' }),
    end_user_type: StringEnum(['INDIVIDUAL', 'BUSINESS'] as const),
    first_name: nullableString(),
    middle_name: nullableString(),
    last_name: nullableString(),
    company_name: nullableString(),
    email: Type.String(),
    reference_code: Type.String(),
    status: StringEnum(endUserStatuses),
    fr_owner_business_id: Type.String(),
    registration_number: nullableString(),
    registration_date: nullableString(),
    business_type: nullableString(),
    incorporation_country: nullableString(),
    sector: nullableString(),
    risk_tier: Type.String(),
    verification_completed_at: Nullable(Timestamp),
    disclosure_accepted_at: Nullable(Timestamp),
    disclosure_version: nullableString(),
    reverse_solicitation: Type.Object({ required: Type.Boolean(), accepted: Type.Boolean() }, { additionalProperties: false }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'EndUser', additionalProperties: false },
);
export type EndUserRecord = Static<typeof EndUser>;

/** The verification decision to apply (docs/architecture.md, Sandbox simulation; the dashboard's sandbox buttons send the same). */
export const SandboxVerificationBody = Type.Object({ outcome: StringEnum(['verified', 'rejected', 'review_required'] as const) }, { title: 'SandboxDecideEndUserVerificationRequest', additionalProperties: false });
export type SandboxVerificationInput = Static<typeof SandboxVerificationBody>;

export const EndUserIdParams = Type.Object({ endUserId: Uuid }, { additionalProperties: false });

/** The hosted onboarding link of a hosted_kyc end user (additive: docs/dashboard.md "Hosted onboarding"). */
export const OnboardingLink = Type.Object(
  {
    url: Type.String({ description: 'PUBLIC_URL + /onboarding/ + onboarding_url_token (percent-encoded) + . + the secret that opens the page: send it to the end user' }),
    onboarding_url_token: Type.String(),
    expires_at: Timestamp,
    completed_at: Nullable(Timestamp),
  },
  { title: 'OnboardingLink', additionalProperties: false },
);
export type OnboardingLinkRecord = Static<typeof OnboardingLink>;
