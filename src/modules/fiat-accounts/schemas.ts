import { Type, type Static } from 'typebox';
import { accountNameLengthMax } from '../../config/limits.js';
import { Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { fiatCurrencies } from '../../ledger/assets.js';
import { accountStatuses } from '../accounts/index.js';

export const ibanCountries = ['DE', 'DK', 'GB', 'LU'] as const;

/** docs/spec.md §4 POST /fiat-accounts. */
export const CreateFiatAccountBody = Type.Object(
  {
    accountName: Type.String({ minLength: 1, maxLength: accountNameLengthMax }),
    currency: StringEnum(fiatCurrencies),
    ibanCountry: Type.Optional(StringEnum(ibanCountries, { description: 'Default: DE for EUR, GB for GBP, LU for USD' })),
    linkedBusinessId: Type.Optional(Uuid),
    umbrellaLinkId: Type.Optional(Uuid),
  },
  { title: 'CreateFiatAccountRequest', additionalProperties: false, examples: [{ accountName: 'Operating account', currency: 'EUR', ibanCountry: 'DE' }] },
);
export type CreateFiatAccountInput = Static<typeof CreateFiatAccountBody>;

/** docs/spec.md §2 fiat account record (`bic` is additive). */
export const FiatAccount = Type.Object(
  {
    id: Uuid,
    fr_account_id: Type.String({ description: 'Provider id, prefix facc_' }),
    account_name: Type.String(),
    currency: StringEnum(fiatCurrencies),
    balance: Type.Number({ description: 'Major units as a JSON number (e.g. 12.34)' }),
    status: Type.String({ description: 'active, frozen or closed (docs/payments.md "Account and payee status")' }),
    is_master: Type.Boolean(),
    linked_business_id: Nullable(Uuid),
    fr_owner_business_id: Type.String(),
    iban: Type.String(),
    bic: Type.String(),
    account_number: Type.String(),
    sort_code: Nullable(Type.String({ description: 'GBP accounts only' })),
    routing_number: Nullable(Type.String({ description: 'USD accounts only' })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'FiatAccount', additionalProperties: false },
);
export type FiatAccountRecord = Static<typeof FiatAccount>;

export const FiatAccountParams = Type.Object({ id: Uuid }, { additionalProperties: false });

/** Sandbox: the status the simulated provider gives the account (any case). */
export const FiatAccountStatusBody = Type.Object({ status: StringEnum(accountStatuses) }, { title: 'SandboxSetFiatAccountStatusRequest', additionalProperties: false });
