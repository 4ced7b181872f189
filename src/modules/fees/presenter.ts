import { formatDecimal, toJsonNumber } from '../../ledger/money.js';
import type { Asset } from '../../ledger/assets.js';
import { formatPercentage } from './calculation.js';
import type { FeeQuote } from './fee-quote.js';
import { defaultScope, type FeeScheduleRow } from './repository.js';
import type { FeePreviewRecord } from './schemas.js';

/** A quote → the docs/spec.md §2 fee preview result; money becomes JSON numbers only here. */
export function presentFeePreview(quote: FeeQuote): FeePreviewRecord {
  const currency = quote.currency;
  return {
    fee_amount: toJsonNumber(quote.feeMinor, currency),
    fee_currency: currency,
    schedule_id: quote.scheduleId,
    schedule_name: quote.scheduleName,
    umbrella_link_id: quote.umbrellaLinkId,
    // docs/spec.md §2 lists goat_member_code without saying what it is; nothing here has one (docs/fees.md).
    goat_member_code: null,
    breakdown: {
      flat_fee: toJsonNumber(quote.breakdown.flatFeeMinor, currency),
      // An exact decimal string with at most 4 decimals ("0.25"), so Number() gives the double that prints as it.
      percentage_fee: Number(quote.breakdown.percentage),
      percentage_amount: toJsonNumber(quote.breakdown.percentageAmountMinor, currency),
      raw_total: toJsonNumber(quote.breakdown.rawTotalMinor, currency),
      min_applied: quote.breakdown.minApplied,
      max_applied: quote.breakdown.maxApplied,
    },
  };
}

/** What the operator CLI prints for a schedule row: amounts as exact decimal strings of the row's currency. */
export interface FeeScheduleView {
  id: string;
  /** `default`: the default schedule; `customer`: the customer's own row, which wins over the default. */
  scope: 'default' | 'customer';
  customer_id: string | null;
  name: string;
  transaction_type: string;
  payment_scheme: string;
  currency: string;
  flat_fee: string;
  /** Percent of the amount: "0.25" is 0.25 %. */
  percentage: string;
  min_fee: string | null;
  max_fee: string | null;
  umbrella_link_id: string | null;
  created_at: string;
  updated_at: string;
}

export function presentSchedule(row: FeeScheduleRow): FeeScheduleView {
  const currency = row.currency as Asset;
  const money = (minor: bigint | null) => (minor === null ? null : formatDecimal(BigInt(minor), currency));
  return {
    id: row.id,
    scope: row.scope === defaultScope ? 'default' : 'customer',
    customer_id: row.customer_id,
    name: row.name,
    transaction_type: row.transaction_type,
    payment_scheme: row.payment_scheme,
    currency: row.currency,
    flat_fee: formatDecimal(BigInt(row.flat_fee_minor), currency),
    percentage: formatPercentage(BigInt(row.percentage_millionths)),
    min_fee: money(row.min_fee_minor),
    max_fee: money(row.max_fee_minor),
    umbrella_link_id: row.umbrella_link_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
