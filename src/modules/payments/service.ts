import { newId } from '../../ids.js';
import type { Clock } from '../../clock.js';
import { pageLimitDefault, pageLimitMax } from '../../config/limits.js';
import { DomainError, notFound, validationError, type FieldError } from '../../errors.js';
import { AmountError, parseAmount } from '../../ledger/amounts.js';
import { executeMoneyMovement, moneyMovement } from '../../ledger/money-movement.js';
import { statementLine } from '../../ledger/statement-lines.js';
import { plannedEvent, type NewResourceRows } from '../../ledger/unit-of-work.js';
import type { FiatCurrency } from '../../ledger/assets.js';
import { providerId } from '../../providers/provider-ids.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { paymentSchemeCurrencies, schemeCarries, type FeeQuoter, type PaymentScheme } from '../fees/index.js';
import { presentFeePreview } from '../fees/index.js';
import type { FeePreviewRecord } from '../fees/index.js';
import { addBalanceEvents, findCustomerAccount } from '../account-lookup.js';
import {
  accountPostings,
  requireCanReceive,
  requireCanSend,
  type CustomerAccount,
} from '../accounts/index.js';
import { explainedBy } from '../accounts/index.js';
import { type PayeeTarget, findPayeeTarget, requirePayeeActive } from '../payees/index.js';
import { presentPayment, presentPaymentCreated } from './presenter.js';
import { findPayment, listPayments, type PaymentFilters, type PaymentRow } from './repository.js';
import type { CreatePaymentInput, FeePreviewInput, PaymentCreatedRecord, PaymentRecord, PaymentsQueryType } from './schemas.js';

/** The schemes that can reach a payee of each currency; the first is the default (docs/payments.md). */
const payeeSchemesByCurrency: Record<FiatCurrency, readonly PaymentScheme[]> = {
  EUR: ['SEPA', 'SEPA_INSTANT', 'SWIFT'],
  GBP: ['FASTER_PAYMENTS', 'SWIFT'],
  USD: ['ACH', 'SWIFT'],
};

/**
 * What the body alone says is wrong with an amount and a requested scheme, all at once: more decimals than the
 * currency has (/amount), a scheme that does not carry the currency (/paymentScheme). Returns the amount in minor units.
 */
function checkAmountAndScheme(amount: number, currency: FiatCurrency, scheme: PaymentScheme | undefined): bigint {
  const errors: FieldError[] = [];
  let amountMinor = 0n;
  try {
    amountMinor = parseAmount(amount, currency);
  } catch (error) {
    if (!(error instanceof AmountError)) throw error;
    errors.push({ location: 'body', path: '/amount', reason: error.message });
  }
  if (scheme !== undefined && !schemeCarries(scheme, currency)) {
    errors.push({ location: 'body', path: '/paymentScheme', reason: `${scheme} carries ${paymentSchemeCurrencies[scheme].join(', ')} only, not ${currency}` });
  }
  if (errors.length > 0) throw validationError(errors);
  return amountMinor;
}

export class PaymentService {
  constructor(
    private readonly storage: Storage,
    private readonly fees: FeeQuoter,
    private readonly clock: Clock,
    private readonly caches: ReadCaches,
    /** A configured rail is handed each new payment by the submission worker (`submit_at`, at once). */
    private readonly submitsToRail: boolean,
    /** What a provider answering on a timer of its own (the sandbox bank) writes with a new payment. */
    private readonly timerRows: NewResourceRows,
  ) {}

  async create(caller: AuthenticatedKey, input: CreatePaymentInput): Promise<PaymentCreatedRecord> {
    const currency = input.currency;
    const amountMinor = checkAmountAndScheme(input.amount, currency, input.paymentScheme);
    // docs/spec.md §4 leaves open whether a target is required: a payment goes to exactly one of them (docs/payments.md).
    if ((input.toAccountId === undefined) === (input.payeeId === undefined)) {
      const reason = 'exactly one of toAccountId and payeeId is required';
      throw validationError([
        { location: 'body', path: '/toAccountId', reason },
        { location: 'body', path: '/payeeId', reason },
      ]);
    }
    const kinds: CustomerAccount['kind'][] =
      input.fromAccountType === 'VIRTUAL_ACCOUNT' ? ['virtual_account'] : input.fromAccountType === 'FIAT_ACCOUNT' ? ['fiat_account'] : ['fiat_account', 'virtual_account'];
    const source = await findCustomerAccount(this.storage, this.caches, caller.customerId, input.fromAccountId.toLowerCase(), kinds);
    if (!source) throw notFound('account');
    const target = input.toAccountId !== undefined ? await this.internalTarget(caller, input.toAccountId, source) : undefined;
    const payee = input.payeeId !== undefined ? await this.payeeTarget(caller, input.payeeId) : undefined;
    // After every ownership check (404), so a status says nothing about another customer's accounts.
    requireCanSend(source);
    if (target) requireCanReceive(target);
    if (payee) requirePayeeActive(payee);
    const targetCurrency = target?.currency ?? payee?.currency;
    if (source.currency !== currency || targetCurrency !== currency) {
      throw new DomainError('CURRENCY_MISMATCH', `The payment is in ${currency}; both accounts must be too.`, {
        currency,
        from_currency: source.currency,
        to_currency: targetCurrency,
      });
    }
    const scheme = this.schemeFor(input.paymentScheme, target !== undefined, payee, currency);
    // The preview and the charge are one computation (docs/fees.md): the same quote the preview endpoint returns.
    const quote = await this.fees.quote({ customerId: caller.customerId, amountMinor, currency, transactionType: 'payment', paymentScheme: scheme });

    const now = this.clock.now();
    const nowText = now.toISOString();
    const paymentId = newId();
    const transactionId = newId();
    const row: PaymentRow = {
      id: paymentId,
      customer_id: caller.customerId,
      fr_payment_id: providerId('pmt'),
      status: 'pending',
      transaction_type: 'payment',
      payment_scheme: scheme,
      amount_minor: amountMinor,
      fee_minor: quote.feeMinor,
      fee_schedule_id: quote.scheduleId,
      currency,
      reference: input.reference,
      from_account_id: source.fiatAccountId,
      from_virtual_account_id: source.kind === 'virtual_account' ? source.id : null,
      to_account_id: target?.fiatAccountId ?? null,
      to_virtual_account_id: target?.kind === 'virtual_account' ? target.id : null,
      payee_id: payee?.id ?? null,
      payee_verification_id: input.payeeVerificationId ?? null,
      umbrella_link_id: input.umbrellaLinkId?.toLowerCase() ?? null,
      transaction_id: transactionId,
      submit_at: this.submitsToRail ? nowText : null,
      failure_reason: null,
      completed_at: null,
      created_at: nowText,
      updated_at: nowText,
    };
    const reserved = amountMinor + quote.feeMinor;
    // Amount plus fee leave the account now, into suspense; settlement moves them on or back.
    const movement = moneyMovement(caller.customerId, nowText, 'payment_reserve', paymentId, [
      ...accountPostings(source, -reserved),
      { account: { kind: 'system', code: 'suspense' }, asset: currency, amount: reserved },
    ]);
    const { work } = movement;
    work.rows.push({ table: 'payments', values: row });
    work.rows.push(...(await this.timerRows(paymentId, caller.customerId, now)));
    work.statementLines.push(
      statementLine({
        id: transactionId,
        customerId: caller.customerId,
        account: source,
        direction: 'outgoing',
        type: 'payment',
        amountMinor,
        status: 'pending',
        counterpart: { id: target?.id ?? payee?.id ?? null, type: target?.kind ?? 'payee' },
        description: `Payment to ${target?.name ?? payee?.name ?? ''}`.trim(),
        reference: input.reference,
        counterpartyName: target?.name ?? payee?.name ?? null,
        counterpartyAccount: target?.iban ?? payee?.account ?? null,
        feeMinor: quote.feeMinor,
        payeeId: payee?.id ?? null,
        paymentId,
        at: nowText,
      }),
    );
    work.events.push(plannedEvent(caller.customerId, 'payment.created', presentPayment(row), nowText));
    await addBalanceEvents(this.storage, this.caches, movement, explainedBy(movement, transactionId));
    await executeMoneyMovement(this.storage, movement);
    return presentPaymentCreated(row);
  }

  /**
   * POST /fees/preview: the fee the same body would be charged by POST /payments. The scheme is resolved as for a
   * payment (the payee's rail, INTERNAL to one of your accounts, or the currency's first rail when no target is
   * given); the fee depends on nothing else, so the source account is not looked up.
   */
  async previewFee(caller: AuthenticatedKey, input: FeePreviewInput): Promise<FeePreviewRecord> {
    const currency = input.currency;
    const amountMinor = checkAmountAndScheme(input.amount, currency, input.paymentScheme);
    if (input.toAccountId !== undefined && input.payeeId !== undefined) {
      const reason = 'at most one of toAccountId and payeeId may be given';
      throw validationError([
        { location: 'body', path: '/toAccountId', reason },
        { location: 'body', path: '/payeeId', reason },
      ]);
    }
    const payee = input.payeeId !== undefined ? await this.payeeTarget(caller, input.payeeId) : undefined;
    if (payee && payee.currency !== currency) {
      throw new DomainError('CURRENCY_MISMATCH', `The payment is in ${currency}; the payee is paid in ${payee.currency}.`, {
        currency,
        to_currency: payee.currency,
      });
    }
    const scheme = this.schemeFor(input.paymentScheme, input.toAccountId !== undefined, payee, currency);
    const quote = await this.fees.quote({
      customerId: caller.customerId,
      amountMinor,
      currency,
      transactionType: input.transactionType ?? 'payment',
      paymentScheme: scheme,
    });
    return presentFeePreview(quote);
  }

  async get(caller: AuthenticatedKey, id: string): Promise<PaymentRecord> {
    const row = await findPayment(this.storage.db, caller.customerId, id.toLowerCase());
    if (!row) throw notFound('payment');
    return presentPayment(row);
  }

  async list(caller: AuthenticatedKey, query: PaymentsQueryType) {
    const page = query.page ?? 1;
    const size = Math.min(query.limit ?? pageLimitDefault, pageLimitMax);
    const filters: PaymentFilters = {
      ...(query.reference !== undefined ? { reference: query.reference } : {}),
      // The validator hands over timestamps as UTC with milliseconds, the form created_at is stored in (sorts as text).
      ...(query.created_from !== undefined ? { createdFrom: query.created_from } : {}),
      ...(query.created_to !== undefined ? { createdTo: query.created_to } : {}),
    };
    const { rows, total } = await listPayments(this.storage.db, caller.customerId, filters, (page - 1) * size, size);
    return { data: rows.map(presentPayment), meta: { pagination: { page, limit: size, total: Number(total) } } };
  }

  private async internalTarget(caller: AuthenticatedKey, id: string, source: CustomerAccount): Promise<CustomerAccount> {
    const target = await findCustomerAccount(this.storage, this.caches, caller.customerId, id.toLowerCase());
    if (!target) throw notFound('account');
    if (target.id === source.id) {
      throw validationError([{ location: 'body', path: '/toAccountId', reason: 'must differ from fromAccountId' }]);
    }
    return target;
  }

  /** The caller's payee as a payment needs it (cached: accounts/customer-accounts.ts). */
  private async payeeTarget(caller: AuthenticatedKey, id: string): Promise<PayeeTarget> {
    return findPayeeTarget(this.storage, this.caches, caller.customerId, id.toLowerCase());
  }

  /**
   * The rail of a payment: INTERNAL between your own accounts; for a payee, the requested scheme if the payee's
   * currency has that rail, else its first rail; with no target (a fee preview), the requested scheme or the
   * currency's first rail. Whether a scheme carries the currency at all is the fee quote's check (400).
   */
  private schemeFor(requested: PaymentScheme | undefined, internal: boolean, payee: PayeeTarget | undefined, currency: FiatCurrency): PaymentScheme {
    if (internal) {
      if (requested !== undefined && requested !== 'INTERNAL') {
        throw validationError([{ location: 'body', path: '/paymentScheme', reason: 'a transfer between your own accounts uses INTERNAL' }]);
      }
      return 'INTERNAL';
    }
    const allowed = payee?.requiresSwift ? (['SWIFT'] as const) : payeeSchemesByCurrency[currency];
    if (requested === undefined) return allowed[0] as PaymentScheme;
    if (payee !== undefined && !(allowed as readonly string[]).includes(requested)) {
      throw validationError([{ location: 'body', path: '/paymentScheme', reason: `must be one of ${allowed.join(', ')} for this payee` }]);
    }
    return requested;
  }
}
