import { toJsonNumber } from '../../ledger/money.js';
import type { Asset } from '../../ledger/assets.js';
import { valueOf, type HistoryValues } from './history.js';
import type { TransactionRecordType } from './schemas.js';

/** Built in the field order of the schema (TransactionRecord): a page is written with JSON.stringify (http/plain-json.ts). */
export function presentTransaction(values: HistoryValues, frOwnerBusinessId: string): TransactionRecordType {
  const currency = valueOf(values, 'currency') as Asset;
  return {
    id: valueOf(values, 'id'),
    fr_transaction_id: valueOf(values, 'fr_transaction_id'),
    transaction_type: valueOf(values, 'transaction_type'),
    amount: toJsonNumber(BigInt(valueOf(values, 'amount_minor')), currency),
    currency,
    status: valueOf(values, 'status'),
    from_account_id: valueOf(values, 'from_account_id'),
    to_account_id: valueOf(values, 'to_account_id'),
    from_account_type: valueOf(values, 'from_account_type'),
    to_account_type: valueOf(values, 'to_account_type'),
    description: valueOf(values, 'description'),
    reference: valueOf(values, 'reference'),
    counterparty_name: valueOf(values, 'counterparty_name'),
    counterparty_account: valueOf(values, 'counterparty_account'),
    fee_amount: toJsonNumber(BigInt(valueOf(values, 'fee_amount_minor')), valueOf(values, 'fee_currency') as Asset),
    fee_currency: valueOf(values, 'fee_currency'),
    fr_owner_business_id: frOwnerBusinessId,
    virtual_account_id: valueOf(values, 'virtual_account_id'),
    payee_id: valueOf(values, 'payee_id'),
    balance_before: toJsonNumber(BigInt(valueOf(values, 'balance_before_minor')), currency),
    balance_after: toJsonNumber(BigInt(valueOf(values, 'balance_after_minor')), currency),
    direction: valueOf(values, 'direction'),
    completed_at: valueOf(values, 'completed_at'),
    created_at: valueOf(values, 'created_at'),
    account_id: valueOf(values, 'account_id'),
    payment_id: valueOf(values, 'payment_id'),
  };
}
