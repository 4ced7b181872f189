import { toJsonNumber } from '../../ledger/money.js';
import type { FiatCurrency } from '../../ledger/assets.js';
import type { VirtualAccountRow } from '../virtual-accounts/index.js';
import type { VirtualAccountRecord } from '../virtual-accounts/index.js';

export function presentVirtualAccount(row: VirtualAccountRow, frOwnerBusinessId: string): VirtualAccountRecord {
  const currency = row.currency as FiatCurrency;
  return {
    id: row.id,
    end_user_id: row.end_user_id,
    master_fiat_account_id: row.master_fiat_account_id,
    fr_virtual_account_id: row.fr_virtual_account_id,
    account_name: row.account_name,
    currency,
    // PostgreSQL returns bigint columns as strings; BigInt reads both that and a SQLite bigint exactly.
    balance: toJsonNumber(BigInt(row.balance_minor), currency),
    status: row.status,
    fr_owner_business_id: frOwnerBusinessId,
    iban: row.iban,
    bic: row.bic,
    bank_name: row.bank_name,
    account_holder_name: row.account_holder_name,
    bank_country: row.bank_country,
    account_number: row.account_number,
    sort_code: row.sort_code,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
