import { toJsonNumber } from '../../ledger/money.js';
import type { FiatCurrency } from '../../ledger/assets.js';
import type { FiatAccountRow } from '../fiat-accounts/index.js';
import type { FiatAccountRecord } from '../fiat-accounts/index.js';

export function presentFiatAccount(row: FiatAccountRow, frOwnerBusinessId: string): FiatAccountRecord {
  const currency = row.currency as FiatCurrency;
  return {
    id: row.id,
    fr_account_id: row.fr_account_id,
    account_name: row.account_name,
    currency,
    balance: toJsonNumber(BigInt(row.balance_minor), currency),
    status: row.status,
    is_master: Boolean(row.is_master),
    linked_business_id: row.linked_business_id,
    fr_owner_business_id: frOwnerBusinessId,
    iban: row.iban,
    bic: row.bic,
    account_number: row.account_number,
    sort_code: row.sort_code,
    routing_number: row.routing_number,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
