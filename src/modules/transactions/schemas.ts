import { Type, type Static } from 'typebox';
import { pageLimitDefault, pageLimitMax, pageMax, paymentReferenceLengthMax } from '../../config/limits.js';
import { Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';

/** docs/spec.md §2 transaction record (EU rails); `account_id` and `payment_id` are additive. */
export const TransactionRecord = Type.Object(
  {
    id: Uuid,
    fr_transaction_id: Type.String({ description: 'Provider id, prefix txn_' }),
    transaction_type: Type.String({ description: 'payment, payment_return, deposit, otc_exchange or otc_exchange_return' }),
    amount: Type.Number(),
    currency: Type.String(),
    status: Type.String({ description: 'pending, completed or failed' }),
    from_account_id: Nullable(Uuid),
    to_account_id: Nullable(Uuid),
    from_account_type: Nullable(Type.String({ description: 'fiat_account, virtual_account, payee or external' })),
    to_account_type: Nullable(Type.String()),
    description: Nullable(Type.String()),
    reference: Nullable(Type.String()),
    counterparty_name: Nullable(Type.String()),
    counterparty_account: Nullable(Type.String()),
    fee_amount: Type.Number(),
    fee_currency: Type.String(),
    fr_owner_business_id: Type.String(),
    virtual_account_id: Nullable(Uuid),
    payee_id: Nullable(Uuid),
    balance_before: Type.Number(),
    balance_after: Type.Number(),
    direction: StringEnum(['incoming', 'outgoing'] as const),
    completed_at: Nullable(Timestamp),
    created_at: Timestamp,
    account_id: Uuid,
    payment_id: Nullable(Uuid),
  },
  { title: 'Transaction', additionalProperties: false },
);
export type TransactionRecordType = Static<typeof TransactionRecord>;

/**
 * The filters a client reconciles with (docs/payments.md "Reconciling a payment without an answer"), the same on
 * GET /transactions and GET /payments: the reference it chose, exactly, and a window of creation times.
 */
export const reconciliationFilters = {
  reference: Type.Optional(
    Type.String({ minLength: 1, maxLength: paymentReferenceLengthMax, description: 'Exactly this reference: case-sensitive, whole, not trimmed' }),
  ),
  created_from: Type.Optional(Type.String({ format: 'date-time', description: 'Created at or after this moment (inclusive), RFC 3339' })),
  created_to: Type.Optional(Type.String({ format: 'date-time', description: 'Created before this moment (exclusive), RFC 3339' })),
};

/** docs/spec.md §4.5: page (default 1) and limit (default 50, clamped to 100), plus additive filters. */
export const TransactionsQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: pageMax, default: 1 })),
    // No maximum: docs/spec.md §4 rule 5 clamps any larger limit to 100 (limit=5000000000 answered 400 before, not 100 items).
    limit: Type.Optional(Type.Integer({ minimum: 1, default: pageLimitDefault, description: `Clamped to ${pageLimitMax}` })),
    account_id: Type.Optional(Uuid),
    status: Type.Optional(StringEnum(['pending', 'completed', 'failed'] as const)),
    direction: Type.Optional(StringEnum(['incoming', 'outgoing'] as const)),
    ...reconciliationFilters,
  },
  { additionalProperties: false },
);
export type TransactionsQueryType = Static<typeof TransactionsQuery>;

export const Pagination = Type.Object(
  { page: Type.Integer(), limit: Type.Integer(), total: Type.Integer() },
  { title: 'Pagination', additionalProperties: false },
);

export const TransactionParams = Type.Object({ id: Uuid }, { additionalProperties: false });

/** A page of GET /transactions: its presenter builds it in this field order (http/plain-json.ts relies on it). */
export const TransactionPage = Type.Object(
  { data: Type.Array(TransactionRecord), meta: Type.Object({ pagination: Pagination }) },
  { additionalProperties: false },
);
