import type { FiatCurrency } from '../../ledger/assets.js';
import type { PayeeRow } from './repository.js';
import type { PayeeRecord } from './schemas.js';

/** Bank details beyond the docs/spec.md §2 columns, kept as sent in `payees.bank_details` (see service.ts). */
export interface StoredBankDetails {
  bankAddressLine1?: string;
  bankAddressCity?: string;
  bankAddressPostalCode?: string;
  bankAddressCountry?: string;
  intermediaryBicSwift?: string;
  intermediaryBankName?: string;
  intermediaryBankAddressLine1?: string;
  intermediaryBankAddressCity?: string;
  intermediaryBankAddressPostalCode?: string;
  intermediaryBankAddressCountry?: string;
}

/** An object of nullable fields, or null when none of them has a value. */
function group<T extends Record<string, string | null>>(fields: T): T | null {
  return Object.values(fields).some((value) => value !== null) ? fields : null;
}

export function presentPayee(row: PayeeRow, frOwnerBusinessId: string): PayeeRecord {
  const extra = JSON.parse(row.bank_details) as StoredBankDetails;
  return {
    id: row.id,
    fr_payee_id: row.fr_payee_id,
    payee_name: row.payee_name,
    currency: row.currency as FiatCurrency,
    status: row.status,
    account_number: row.account_number,
    sort_code: row.sort_code,
    swift: row.swift,
    bank_name: row.bank_name,
    // Address line 1, city and country are required on create (docs/payees.md).
    address_line1: row.address_line1 ?? '',
    address_line2: row.address_line2,
    city: row.city ?? '',
    state_region: row.state_region,
    postal_code: row.postal_code,
    country_code: row.country_code ?? '',
    end_user_id: row.end_user_id,
    requires_vop: Boolean(row.requires_vop),
    fr_owner_business_id: frOwnerBusinessId,
    iban: row.iban,
    routing_number: row.routing_number,
    account_holder_name: row.account_holder_name ?? row.payee_name,
    bank_address: group({
      line1: extra.bankAddressLine1 ?? null,
      city: extra.bankAddressCity ?? null,
      postal_code: extra.bankAddressPostalCode ?? null,
      country_code: extra.bankAddressCountry ?? null,
    }),
    intermediary_bank: group({
      swift: extra.intermediaryBicSwift ?? null,
      name: extra.intermediaryBankName ?? null,
      address_line1: extra.intermediaryBankAddressLine1 ?? null,
      city: extra.intermediaryBankAddressCity ?? null,
      postal_code: extra.intermediaryBankAddressPostalCode ?? null,
      country_code: extra.intermediaryBankAddressCountry ?? null,
    }),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
