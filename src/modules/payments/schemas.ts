import { Type, type Static } from 'typebox';
import {
  pageLimitDefault,
  pageLimitMax,
  pageMax,
  payeeVerificationIdLengthMax,
  paymentAmountMax,
  paymentReferenceLengthMax,
} from '../../config/limits.js';
import { Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { reconciliationFilters } from '../transactions/index.js';
import { feeTransactionTypes, paymentSchemes } from '../fees/index.js';
import { fiatCurrencies } from '../../ledger/assets.js';

/** The fields of a payment; POST /fees/preview takes the same ones, so one body gives one fee. */
const paymentFields = {
  fromAccountId: Uuid,
  amount: Type.Number({ exclusiveMinimum: 0, maximum: paymentAmountMax, description: 'Major units; at most the currency’s decimals' }),
  currency: StringEnum(fiatCurrencies),
  reference: Type.String({ minLength: 1, maxLength: paymentReferenceLengthMax }),
  fromAccountType: Type.Optional(StringEnum(['FIAT_ACCOUNT', 'VIRTUAL_ACCOUNT'] as const)),
  toAccountId: Type.Optional(Uuid),
  payeeId: Type.Optional(Uuid),
  paymentScheme: Type.Optional(
    StringEnum(paymentSchemes, {
      description:
        'Default: INTERNAL to one of your accounts; for a payee the first rail of its currency (SEPA, FASTER_PAYMENTS, ACH), or SWIFT when that is its only rail',
    }),
  ),
  payeeVerificationId: Type.Optional(Type.String({ minLength: 1, maxLength: payeeVerificationIdLengthMax })),
  umbrellaLinkId: Type.Optional(Uuid),
};

export const CreatePaymentBody = Type.Object(paymentFields, {
  title: 'CreatePaymentRequest',
  additionalProperties: false,
  examples: [{ fromAccountId: '0196b2d4-5e6f-7a80-9b1c-2d3e4f5a6b7c', payeeId: '0196b2d4-6a10-7c3e-8f21-4b5c6d7e8f90', amount: 250.5, currency: 'EUR', reference: 'Invoice 2026-0042' }],
});
export type CreatePaymentInput = Static<typeof CreatePaymentBody>;

/**
 * docs/spec.md §4 POST /fees/preview lists amount, currency, transactionType and paymentScheme without required flags
 * (docs/fees.md). It also takes every other field of POST /payments, all optional, and resolves the scheme the same
 * way, so the fee previewed for a payment body is the fee that payment is charged.
 */
export const FeePreviewBody = Type.Object(
  {
    ...paymentFields,
    fromAccountId: Type.Optional(paymentFields.fromAccountId),
    reference: Type.Optional(paymentFields.reference),
    transactionType: Type.Optional(StringEnum(feeTransactionTypes, { description: 'Default: payment' })),
  },
  { title: 'PreviewFeesRequest', additionalProperties: false, examples: [{ amount: 250.5, currency: 'EUR', paymentScheme: 'SEPA' }] },
);
export type FeePreviewInput = Static<typeof FeePreviewBody>;

/** docs/spec.md §2 payment creation response (camelCase, amount as a decimal string). */
export const PaymentCreated = Type.Object(
  {
    id: Uuid,
    frPaymentId: Type.String({ description: 'Provider id, prefix pmt_' }),
    status: StringEnum(['pending', 'completed', 'failed'] as const),
    amount: Type.String({ description: 'Decimal string, e.g. "10.00"', examples: ['10.00'] }),
    currency: Type.String(),
    reference: Type.String(),
    transactionType: Type.String(),
    createdAt: Timestamp,
  },
  { title: 'PaymentCreated', additionalProperties: false },
);

/** GET /payments/{id} (additive: docs/architecture.md, Additive endpoints): the creation fields and what happened since. */
export const Payment = Type.Object(
  {
    ...PaymentCreated.properties,
    fee: Type.String({ description: 'Decimal string, charged on top of amount' }),
    paymentScheme: Type.String(),
    fromAccountId: Uuid,
    fromAccountType: StringEnum(['FIAT_ACCOUNT', 'VIRTUAL_ACCOUNT'] as const),
    toAccountId: Nullable(Uuid),
    payeeId: Nullable(Uuid),
    transactionId: Uuid,
    failureReason: Nullable(Type.String()),
    completedAt: Nullable(Timestamp),
    updatedAt: Timestamp,
  },
  { title: 'Payment', additionalProperties: false },
);
export type PaymentRecord = Static<typeof Payment>;
export type PaymentCreatedRecord = Static<typeof PaymentCreated>;

/** GET /payments: paginated like GET /transactions, filtered by the reference and a creation window like it too. */
export const PaymentsQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: pageMax, default: 1 })),
    // No maximum: like GET /transactions (docs/spec.md §4 rule 5), a larger limit is clamped to 100, not refused.
    limit: Type.Optional(Type.Integer({ minimum: 1, default: pageLimitDefault, description: `Clamped to ${pageLimitMax}` })),
    ...reconciliationFilters,
  },
  { additionalProperties: false },
);
export type PaymentsQueryType = Static<typeof PaymentsQuery>;

export const PaymentParams = Type.Object({ id: Uuid }, { additionalProperties: false });
export const SettleBody = Type.Object({ outcome: StringEnum(['completed', 'failed'] as const) }, { title: 'SandboxSettlePaymentRequest', additionalProperties: false });
