import { newId } from '../../ids.js';
import type { Clock } from '../../clock.js';
import { DomainError, validationError, type FieldError } from '../../errors.js';
import { AmountError, parseAmount } from '../../ledger/amounts.js';
import { fiatCurrencies, scaleOf, type FiatCurrency } from '../../ledger/assets.js';
import { feeScheduleCacheEntriesMax, feeScheduleCacheTtlMs } from '../../config/limits.js';
import type { ExpiringCache, ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import { findCustomerById } from '../customers/index.js';
import { InvalidInputError } from '../customers/index.js';
import { computeFee, formatPercentage, millionthsPerPercent, parsePercentage } from './calculation.js';
import {
  feeTransactionTypes,
  paymentSchemeCurrencies,
  paymentSchemes,
  schemeCarries,
  type FeeQuote,
  type FeeQuoteInput,
  type FeeQuoter,
  type PaymentScheme,
} from './fee-quote.js';
import { feePercentageDecimalsMax, feePercentageMax, feeScheduleAmountMax, feeScheduleNameLengthMax } from './limits.js';
import { presentSchedule, type FeeScheduleView } from './presenter.js';
import { defaultScope, findCandidateSchedules, listSchedules, upsertSchedule, type FeeScheduleRow } from './repository.js';

/** What the operator gives `customer-api fees set` (all text, as typed); see docs/fees.md "Operator CLI". */
export interface SetFeeScheduleInput {
  customerId: string;
  paymentScheme: string;
  currency: string;
  /** Default `payment`. */
  transactionType?: string;
  /** Major units, e.g. "0.20". Default 0. */
  flat?: string;
  /** Percent of the amount, e.g. "0.25" for 0.25 %. Default 0. */
  percentage?: string;
  /** Major units. Default: no minimum. */
  min?: string;
  /** Major units. Default: no maximum. */
  max?: string;
  /** Default `Custom <SCHEME> <CURRENCY>`. */
  name?: string;
  umbrellaLinkId?: string;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An operator's value of a closed list, matched ignoring case ("eur" → "EUR"). */
function oneOf<const T extends readonly string[]>(values: T, value: string, option: string): T[number] {
  const found = values.find((allowed) => allowed.toUpperCase() === value.trim().toUpperCase());
  if (found === undefined) throw new InvalidInputError(`${option} "${value}" must be one of ${values.join(', ')}`);
  return found;
}

function fieldError(path: string, reason: string): FieldError {
  return { location: 'body', path, reason };
}

/** Why a (type, scheme, currency) cannot be quoted at all, as field errors of a request with these names; none if it can. */
function keyErrors(input: { transactionType: string; paymentScheme: string; currency: string }): FieldError[] {
  const errors: FieldError[] = [];
  if (!(feeTransactionTypes as readonly string[]).includes(input.transactionType)) {
    errors.push(fieldError('/transactionType', `must be one of ${feeTransactionTypes.join(', ')}`));
  }
  if (!(fiatCurrencies as readonly string[]).includes(input.currency)) {
    errors.push(fieldError('/currency', `must be one of ${fiatCurrencies.join(', ')}`));
  } else if (!(paymentSchemes as readonly string[]).includes(input.paymentScheme)) {
    errors.push(fieldError('/paymentScheme', `must be one of ${paymentSchemes.join(', ')}`));
  } else if (!schemeCarries(input.paymentScheme as PaymentScheme, input.currency as FiatCurrency)) {
    const carried = paymentSchemeCurrencies[input.paymentScheme as PaymentScheme].join(', ');
    errors.push(fieldError('/paymentScheme', `${input.paymentScheme} carries ${carried} only, not ${input.currency}`));
  }
  return errors;
}

/**
 * Fee schedules and fee quotes (docs/fees.md). A payment charges exactly the fee its preview shows because both
 * go through `quote` with the same input: same schedule lookup, same bigint arithmetic (calculation.ts).
 */
export class FeeService implements FeeQuoter {
  /**
   * The schedule rows of (customer, type, scheme, currency), read again after feeScheduleCacheTtlMs: an operator's
   * `fees set` in another process applies within it; one through this process at once (docs/fees.md).
   */
  private readonly schedules: ExpiringCache<string, FeeScheduleRow[]>;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    caches: ReadCaches,
  ) {
    this.schedules = caches.named('fee-schedules', feeScheduleCacheTtlMs, feeScheduleCacheEntriesMax);
  }

  /**
   * The fee of a transaction: the customer's own schedule row for (type, scheme, currency) if it has one, else
   * the default schedule's. 400 VALIDATION_ERROR (paths /amount, /transactionType, /currency, /paymentScheme,
   * as in the preview and payment bodies) for input no schedule could price; 422 FEE_SCHEDULE_NOT_FOUND when
   * neither row exists.
   */
  async quote(input: FeeQuoteInput): Promise<FeeQuote> {
    const errors = keyErrors(input);
    if (input.amountMinor <= 0n) errors.unshift(fieldError('/amount', 'must be greater than 0'));
    if (errors.length > 0) throw validationError(errors);

    const key = `${input.customerId}|${input.transactionType}|${input.paymentScheme}|${input.currency}`;
    const rows = (await this.schedules.getOrLoad(key, () => findCandidateSchedules(this.storage.db, input.customerId, input))) ?? [];
    const row = rows.find((candidate) => candidate.scope === input.customerId) ?? rows.find((candidate) => candidate.scope === defaultScope);
    if (row === undefined) {
      throw new DomainError(
        'FEE_SCHEDULE_NOT_FOUND',
        `No fee schedule prices a ${input.transactionType} over ${input.paymentScheme} in ${input.currency}.`,
        { transaction_type: input.transactionType, payment_scheme: input.paymentScheme, currency: input.currency },
      );
    }
    const percentageMillionths = BigInt(row.percentage_millionths);
    const fee = computeFee(input.amountMinor, {
      flatFeeMinor: BigInt(row.flat_fee_minor),
      percentageMillionths,
      minFeeMinor: row.min_fee_minor === null ? null : BigInt(row.min_fee_minor),
      maxFeeMinor: row.max_fee_minor === null ? null : BigInt(row.max_fee_minor),
    });
    return {
      feeMinor: fee.feeMinor,
      currency: input.currency,
      scheduleId: row.id,
      scheduleName: row.name,
      umbrellaLinkId: row.umbrella_link_id,
      breakdown: {
        flatFeeMinor: fee.flatFeeMinor,
        percentage: formatPercentage(percentageMillionths),
        percentageAmountMinor: fee.percentageAmountMinor,
        rawTotalMinor: fee.rawTotalMinor,
        minApplied: fee.minApplied,
        maxApplied: fee.maxApplied,
      },
    };
  }

  /**
   * Operator: sets the customer's own row for (type, scheme, currency), replacing all its terms (options not
   * given are 0 or none, not kept from before); the row keeps its id. Refuses bad input with InvalidInputError.
   */
  async setSchedule(input: SetFeeScheduleInput): Promise<FeeScheduleView> {
    const paymentScheme = oneOf(paymentSchemes, input.paymentScheme, '--scheme');
    const currency = oneOf(fiatCurrencies, input.currency, '--currency');
    const transactionType = input.transactionType === undefined ? 'payment' : oneOf(feeTransactionTypes, input.transactionType, '--transaction-type');
    if (!schemeCarries(paymentScheme, currency)) {
      throw new InvalidInputError(`--scheme ${paymentScheme} carries ${paymentSchemeCurrencies[paymentScheme].join(', ')} only, not ${currency}`);
    }
    const money = (option: string, value: string | undefined): bigint | null => {
      if (value === undefined) return null;
      let minor: bigint;
      try {
        minor = parseAmount(value.trim(), currency);
      } catch (error) {
        if (error instanceof AmountError) throw new InvalidInputError(`${option} "${value}" ${error.message}`);
        throw error;
      }
      if (minor > BigInt(feeScheduleAmountMax) * 10n ** BigInt(scaleOf(currency))) throw new InvalidInputError(`${option} "${value}" must be at most ${feeScheduleAmountMax}`);
      return minor;
    };
    const flatFeeMinor = money('--flat', input.flat) ?? 0n;
    const minFeeMinor = money('--min', input.min);
    const maxFeeMinor = money('--max', input.max);
    let percentageMillionths = 0n;
    if (input.percentage !== undefined) {
      const parsed = parsePercentage(input.percentage.trim());
      if (parsed === null || parsed > BigInt(feePercentageMax) * millionthsPerPercent) {
        throw new InvalidInputError(
          `--percentage "${input.percentage}" must be a percent from 0 to ${feePercentageMax} with at most ${feePercentageDecimalsMax} decimals (0.25 means 0.25 %)`,
        );
      }
      percentageMillionths = parsed;
    }
    if (minFeeMinor !== null && maxFeeMinor !== null && minFeeMinor > maxFeeMinor) {
      throw new InvalidInputError(`--min ${input.min} must not be above --max ${input.max}`);
    }
    const name = (input.name ?? `Custom ${paymentScheme} ${currency}`).trim();
    if (name.length < 1 || name.length > feeScheduleNameLengthMax) throw new InvalidInputError(`--name must be 1-${feeScheduleNameLengthMax} characters`);
    const umbrellaLinkId = input.umbrellaLinkId?.trim().toLowerCase() ?? null;
    if (umbrellaLinkId !== null && !uuidPattern.test(umbrellaLinkId)) {
      throw new InvalidInputError(`--umbrella-link-id "${input.umbrellaLinkId}" is not a UUID`);
    }
    const customer = await findCustomerById(this.storage.db, input.customerId.trim().toLowerCase());
    if (!customer) throw new InvalidInputError(`no customer with id ${input.customerId}`);

    const now = this.clock.now().toISOString();
    const row: FeeScheduleRow = {
      id: newId(),
      scope: customer.id,
      customer_id: customer.id,
      name,
      transaction_type: transactionType,
      payment_scheme: paymentScheme,
      currency,
      flat_fee_minor: flatFeeMinor,
      percentage_millionths: percentageMillionths,
      min_fee_minor: minFeeMinor,
      max_fee_minor: maxFeeMinor,
      umbrella_link_id: umbrellaLinkId,
      created_at: now,
      updated_at: now,
    };
    const saved = await upsertSchedule(this.storage.db, row);
    this.schedules.deleteWhere((key) => key.startsWith(`${customer.id}|`));
    return presentSchedule(saved);
  }

  /**
   * Operator: the default schedule, or — with a customer id — the customer's effective schedule: for every
   * (type, scheme, currency) the row a quote would use (`scope` says whether it is the customer's own).
   * Ordered by transaction type, scheme (as in paymentSchemes) and currency.
   */
  async listSchedules(customerId?: string): Promise<FeeScheduleView[]> {
    let scopes = [defaultScope];
    let customer: string | undefined;
    if (customerId !== undefined) {
      const found = await findCustomerById(this.storage.db, customerId.trim().toLowerCase());
      if (!found) throw new InvalidInputError(`no customer with id ${customerId}`);
      customer = found.id;
      scopes = [defaultScope, found.id];
    }
    const effective = new Map<string, FeeScheduleRow>();
    for (const row of await listSchedules(this.storage.db, scopes)) {
      const key = `${row.transaction_type}|${row.payment_scheme}|${row.currency}`;
      const existing = effective.get(key);
      if (existing === undefined || row.scope === customer) effective.set(key, row);
    }
    const rank = (values: readonly string[], value: string) => {
      const index = values.indexOf(value);
      return index === -1 ? values.length : index;
    };
    return [...effective.values()]
      .sort(
        (a, b) =>
          rank(feeTransactionTypes, a.transaction_type) - rank(feeTransactionTypes, b.transaction_type) ||
          rank(paymentSchemes, a.payment_scheme) - rank(paymentSchemes, b.payment_scheme) ||
          a.currency.localeCompare(b.currency),
      )
      .map(presentSchedule);
  }
}
