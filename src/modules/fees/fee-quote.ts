import type { FiatCurrency } from '../../ledger/assets.js';

/**
 * The contract between payments and fees: a payment charges exactly the fee its preview shows because both call
 * FeeService.quote with the same input (docs/fees.md).
 */

/** Decided in docs/fees.md: the transaction types and payment schemes fee schedules (and payments) know. */
export const feeTransactionTypes = ['payment'] as const;
type FeeTransactionType = (typeof feeTransactionTypes)[number];
export const paymentSchemes = ['SEPA', 'SEPA_INSTANT', 'FASTER_PAYMENTS', 'SWIFT', 'ACH', 'INTERNAL'] as const;
export type PaymentScheme = (typeof paymentSchemes)[number];

export interface FeeQuoteInput {
  customerId: string;
  /** Minor units, > 0. */
  amountMinor: bigint;
  currency: FiatCurrency;
  transactionType: FeeTransactionType;
  paymentScheme: PaymentScheme;
}

export interface FeeQuote {
  feeMinor: bigint;
  currency: FiatCurrency;
  scheduleId: string;
  scheduleName: string;
  umbrellaLinkId: string | null;
  breakdown: {
    flatFeeMinor: bigint;
    /** The schedule's percentage as an exact decimal string, e.g. "0.25" for 0.25 %. */
    percentage: string;
    percentageAmountMinor: bigint;
    rawTotalMinor: bigint;
    minApplied: boolean;
    maxApplied: boolean;
  };
}

export interface FeeQuoter {
  quote(input: FeeQuoteInput): Promise<FeeQuote>;
}

/**
 * The currencies each payment scheme carries (docs/fees.md): the SEPA schemes move EUR, Faster Payments GBP, ACH
 * USD; SWIFT and INTERNAL (a transfer between two accounts on this platform) move all three. A fee quote (and so a
 * payment) for another pair is refused with 400 on /paymentScheme.
 */
export const paymentSchemeCurrencies: Readonly<Record<PaymentScheme, readonly FeeQuoteInput['currency'][]>> = {
  SEPA: ['EUR'],
  SEPA_INSTANT: ['EUR'],
  FASTER_PAYMENTS: ['GBP'],
  SWIFT: ['EUR', 'GBP', 'USD'],
  ACH: ['USD'],
  INTERNAL: ['EUR', 'GBP', 'USD'],
};

export function schemeCarries(scheme: PaymentScheme, currency: FeeQuoteInput['currency']): boolean {
  return paymentSchemeCurrencies[scheme].includes(currency);
}
