import { toJsonNumber, type Currency } from '../../ledger/money.js';
import type { TransactionRow } from './repository.js';
import type { TransactionRecordType } from './schemas.js';

export function presentTransaction(row: TransactionRow, frOwnerBusinessId: string): TransactionRecordType {
  const currency = row.currency as Currency;
  return {
    id: row.id,
    fr_transaction_id: row.fr_transaction_id,
    transaction_type: row.transaction_type,
    amount: toJsonNumber(BigInt(row.amount_minor), currency),
    currency,
    status: row.status,
    from_account_id: row.from_account_id,
    to_account_id: row.to_account_id,
    from_account_type: row.from_account_type,
    to_account_type: row.to_account_type,
    description: row.description,
    reference: row.reference,
    counterparty_name: row.counterparty_name,
    counterparty_account: row.counterparty_account,
    fee_amount: toJsonNumber(BigInt(row.fee_amount_minor), row.fee_currency as Currency),
    fee_currency: row.fee_currency,
    fr_owner_business_id: frOwnerBusinessId,
    virtual_account_id: row.virtual_account_id,
    payee_id: row.payee_id,
    balance_before: toJsonNumber(BigInt(row.balance_before_minor), currency),
    balance_after: toJsonNumber(BigInt(row.balance_after_minor), currency),
    direction: row.direction,
    completed_at: row.completed_at,
    created_at: row.created_at,
    account_id: row.account_id,
    payment_id: row.payment_id,
  };
}
