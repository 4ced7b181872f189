import { formatDecimal } from '../../ledger/money.js';
import type { Asset } from '../../ledger/assets.js';
import type { PaymentRow } from './repository.js';
import type { PaymentCreatedRecord, PaymentRecord } from './schemas.js';

export function presentPaymentCreated(row: PaymentRow): PaymentCreatedRecord {
  return {
    id: row.id,
    frPaymentId: row.fr_payment_id,
    status: row.status,
    amount: formatDecimal(BigInt(row.amount_minor), row.currency as Asset),
    currency: row.currency,
    reference: row.reference,
    transactionType: row.transaction_type,
    createdAt: row.created_at,
  };
}

export function presentPayment(row: PaymentRow): PaymentRecord {
  return {
    ...presentPaymentCreated(row),
    fee: formatDecimal(BigInt(row.fee_minor), row.currency as Asset),
    paymentScheme: row.payment_scheme,
    fromAccountId: row.from_virtual_account_id ?? row.from_account_id,
    fromAccountType: row.from_virtual_account_id ? 'VIRTUAL_ACCOUNT' : 'FIAT_ACCOUNT',
    toAccountId: row.to_virtual_account_id ?? row.to_account_id,
    payeeId: row.payee_id,
    transactionId: row.transaction_id,
    failureReason: row.failure_reason,
    completedAt: row.completed_at,
    updatedAt: row.updated_at,
  };
}
