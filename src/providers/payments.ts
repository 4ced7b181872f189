import type { FiatCurrency } from '../ledger/assets.js';

/** A payment as it is handed to the bank that carries it out. */
export interface PaymentSubmission {
  /** The payment's provider id (fr_payment_id): the idempotency key of the submission and the reference of its outcome events. */
  frPaymentId: string;
  amountMinor: bigint;
  currency: FiatCurrency;
  /** The rail: SEPA, SWIFT, FASTER_PAYMENTS, ACH, INTERNAL … */
  scheme: string;
  /** The client's reference of the payment. */
  reference: string;
}

/**
 * The bank's side of payments (docs/providers.md "Reporting outcomes"). `submitPayment` hands over a payment whose
 * money is already reserved; it is called by the worker `payment-submission` outside any transaction, and again
 * with the same payment if an attempt did not answer, so it must be idempotent per frPaymentId. Its answer only says
 * the bank took the payment: the outcome (`payment.completed`, `payment.failed`) comes later as a provider event in
 * the inbox, from the bank's webhook or a poller. A bank that refuses the payment for good throws
 * ProviderRefusedError (providers/provisioning.ts): the payment fails and its money returns.
 */
export interface PaymentRail {
  /** The adapter's name: its provider events carry it (`provider_events.provider`). */
  readonly name: string;
  submitPayment(payment: PaymentSubmission): Promise<void>;
}
