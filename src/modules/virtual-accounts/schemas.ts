import { Type, type Static } from 'typebox';
import { accountNameLengthMax, countryCodeLength } from '../../config/limits.js';
import { Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { fiatCurrencies } from '../../ledger/assets.js';
import { ibanCountries } from '../fiat-accounts/index.js';
import { accountStatuses } from '../accounts/index.js';

/** docs/spec.md §4 POST /virtual-accounts. */
export const CreateVirtualAccountBody = Type.Object(
  {
    accountName: Type.String({ minLength: 1, maxLength: accountNameLengthMax }),
    masterFiatAccountId: Type.String({ format: 'uuid', description: 'A master fiat account of yours (is_master true) in the same currency' }),
    currency: StringEnum(fiatCurrencies, { description: 'Must equal the master account’s currency' }),
    endUserId: Type.Optional(Type.String({ format: 'uuid', description: 'One of your end users; the account is held in their name' })),
    ibanCountry: Type.Optional(StringEnum(ibanCountries, { description: 'Default: the country of the master account’s IBAN' })),
    umbrellaLinkId: Type.Optional(Uuid),
  },
  { title: 'CreateVirtualAccountRequest', additionalProperties: false },
);
export type CreateVirtualAccountInput = Static<typeof CreateVirtualAccountBody>;

/** docs/spec.md §2 virtual account record (`balance` is additive, docs/spec.md §9 rule 6). */
export const VirtualAccount = Type.Object(
  {
    id: Uuid,
    end_user_id: Nullable(Uuid),
    master_fiat_account_id: Uuid,
    fr_virtual_account_id: Type.String({ description: 'Provider id, prefix vacc_' }),
    account_name: Type.String(),
    currency: StringEnum(fiatCurrencies),
    balance: Type.Number({ description: 'This account’s share of its master’s balance, major units as a JSON number' }),
    status: Type.String({ description: 'active, frozen or closed (docs/payments.md "Account and payee status")' }),
    fr_owner_business_id: Type.String(),
    iban: Type.String(),
    bic: Type.String(),
    bank_name: Type.String(),
    account_holder_name: Type.String(),
    bank_country: Type.String({ minLength: countryCodeLength, maxLength: countryCodeLength, description: 'ISO 3166-1 alpha-2', examples: ['DE'] }),
    account_number: Type.String(),
    sort_code: Nullable(Type.String({ description: 'GBP accounts only' })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'VirtualAccount', additionalProperties: false },
);
export type VirtualAccountRecord = Static<typeof VirtualAccount>;

export const VirtualAccountParams = Type.Object({ id: Uuid }, { additionalProperties: false });

/** Sandbox: the status the simulated provider gives the virtual account (any case). */
export const VirtualAccountStatusBody = Type.Object({ status: StringEnum(accountStatuses) }, { title: 'SandboxSetVirtualAccountStatusRequest', additionalProperties: false });
