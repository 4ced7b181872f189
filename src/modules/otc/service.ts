import { customerNow, type Clock, type CustomerClocks } from '../../clock.js';
import { otcSourceAmountMinEur, pageLimitMax, paymentAmountMax } from '../../config/limits.js';
import { DomainError, notFound, validationError } from '../../errors.js';
import { newId } from '../../ids.js';
import { AmountError, parseAmount } from '../../ledger/amounts.js';
import type { CryptoAsset } from '../../ledger/assets.js';
import { formatDecimal } from '../../ledger/money.js';
import { executeMoneyMovement, moneyMovement } from '../../ledger/money-movement.js';
import { statementLine } from '../../ledger/statement-lines.js';
import { plannedAnswer, plannedEvent, type KeyedAnswer, type MovedRecord, type NewResourceRows } from '../../ledger/unit-of-work.js';
import { cryptoAssetNamed } from '../../ledger/networks.js';
import type { OtcPriceProvider } from '../../providers/otc.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import type { OtcOrdersTable, OtcQuotesTable } from '../../storage/tables.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { addBalanceEvents, findCustomerAccount } from '../account-lookup.js';
import { accountPostings, explainedBy, requireCanSend, type CustomerAccount } from '../accounts/index.js';
import type { WalletOwnership } from '../wallets/index.js';
import { walletReceives, walletsReceiving } from '../wallets/index.js';
import { presentOrder, presentQuote } from './presenter.js';
import { convert, customerRate } from './quote-math.js';
import { accountsIn } from './eligible-accounts.js';
import { findOrder, findQuote, listOrders } from './repository.js';
import type { ConfirmInput, EligibleAccountRecord, EligibleWalletRecord, OrderRecord, QuoteInput, QuoteRecord } from './schemas.js';

/** A quote as the dashboard shows it (OtcService.quoteState). */
export interface QuoteState {
  quote: QuoteRecord;
  sourceFrAccountId: string;
  destinationProviderWalletId: string;
  /** The order confirmed from it; null while unconfirmed. */
  orderId: string | null;
  /** Whole seconds until it expires in its customer's time; 0 once expired. */
  secondsLeft: number;
}

export interface OtcSettings {
  quoteTtlSeconds: number;
  spreadBps: number;
}

/** What EUR is exchanged from (spec: "OTC exchange of EUR into crypto"). */
const sourceCurrency = 'EUR';
const defaultDestination: CryptoAsset = 'USDC';

const quoteExpired = (expiresAt: string) => new DomainError('QUOTE_EXPIRED', 'The quote has expired: request a new one.', { ttl_expires_at: expiresAt });
const quoteConfirmed = () => new DomainError('QUOTE_ALREADY_CONFIRMED', 'The quote was confirmed already: each quote makes one order. Request a new one.');

/**
 * OTC exchange of EUR into crypto (docs/otc.md): the eligible accounts and wallets, indicative quotes priced by the
 * OtcPriceProvider, and their confirmation into orders. Confirming reserves the EUR (account → suspense) in the money
 * plan that creates the order and stores the Idempotency-Key answer; sandbox.ts moves the order on.
 */
export class OtcService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    /** A quote's TTL is kept in its customer's time (docs/test-clocks.md). */
    private readonly customerClocks: CustomerClocks,
    private readonly caches: ReadCaches,
    private readonly prices: OtcPriceProvider,
    private readonly ownership: WalletOwnership,
    private readonly settings: OtcSettings,
    /** What a liquidity provider answering on a timer of its own (the sandbox) writes with a new order. */
    private readonly timerRows: NewResourceRows,
  ) {}

  async eligibleAccounts(caller: AuthenticatedKey): Promise<EligibleAccountRecord[]> {
    const rows = await accountsIn(this.storage.db, caller.customerId, sourceCurrency);
    return rows.map((row) => ({ id: row.id, currency: row.currency, isMaster: row.is_master, label: row.account_name, balance: formatDecimal(row.available_minor, sourceCurrency) }));
  }

  /**
   * docs/spec.md §4: `asset` selects the wallets to list (1-10 characters, any case). It is a filter, not a request to
   * exchange: an asset the caller has no eligible wallet for, known to us or not, lists nothing (200 []).
   */
  async eligibleWallets(caller: AuthenticatedKey, assetText: string): Promise<EligibleWalletRecord[]> {
    const asset = cryptoAssetNamed(assetText);
    if (asset === undefined || !this.prices.assets.includes(asset)) return [];
    const rows = await walletsReceiving(this.storage.db, caller.customerId, asset);
    return rows.map((row) => ({ id: row.id, label: row.display_name, network: row.network, assetAddress: row.address, asset: row.asset }));
  }

  async quote(caller: AuthenticatedKey, input: QuoteInput): Promise<QuoteRecord> {
    const destination = this.tradable(input.destinationCurrency ?? defaultDestination, '/destinationCurrency');
    const sourceMinor = parseSourceAmount(input.sourceAmountEur);
    const account = await this.sourceAccount(caller, input.sourceFrAccountId);
    const walletId = await this.ownership.require(caller.customerId, input.destinationProviderWalletId);
    if (!(await walletReceives(this.storage, caller.customerId, walletId, destination))) {
      throw new DomainError('ADDRESS_REQUIRED', `The wallet has no ${destination} address to receive into; create one with POST /wallets/{walletId}/addresses first.`, {
        asset: destination,
      });
    }
    const now = this.clock.now();
    const [midRate, usdcMidRate] = await Promise.all([this.prices.midRate(destination, now), this.prices.midRate('USDC', now)]);
    // The quote lives in its customer's time: a test clock's advance expires it (docs/test-clocks.md).
    const quotedAt = await customerNow(this.customerClocks, this.clock, caller.customerId);
    const rate = customerRate(midRate, this.settings.spreadBps);
    const destinationMinor = convert(sourceMinor, rate, destination);
    const row: OtcQuotesTable = {
      id: newId(),
      customer_id: caller.customerId,
      source_account_id: account.id,
      wallet_id: walletId,
      destination_currency: destination,
      source_amount_minor: sourceMinor,
      mid_rate: midRate,
      rate,
      destination_amount_minor: destinationMinor,
      spread_minor: convert(sourceMinor, midRate, destination) - destinationMinor,
      source_amount_usdc_minor: convert(sourceMinor, usdcMidRate, 'USDC'),
      ttl_seconds: this.settings.quoteTtlSeconds,
      expires_at: new Date(quotedAt.getTime() + this.settings.quoteTtlSeconds * 1000).toISOString(),
      order_id: null,
      created_at: quotedAt.toISOString(),
    };
    await this.storage.db.insertInto('otc_quotes').values(row).execute();
    return presentQuote(row);
  }

  /**
   * Confirms the caller's unexpired, unconfirmed quote into an order at the quote's rate and amounts. The quote's
   * guard (order_id still null) makes concurrent confirmations of one quote create one order whatever their keys.
   */
  async confirm(caller: AuthenticatedKey, input: ConfirmInput, key: KeyedAnswer | undefined): Promise<MovedRecord<OrderRecord>> {
    const quote = await findQuote(this.storage.db, caller.customerId, input.quoteId.toLowerCase());
    if (!quote) throw notFound('quote');
    const destination = quote.destination_currency as CryptoAsset;
    const minimum = input.minDestinationAmount == null ? undefined : parseDestinationMinimum(input.minDestinationAmount, destination);
    if (quote.order_id !== null) throw quoteConfirmed();
    const now = this.clock.now();
    if ((await customerNow(this.customerClocks, this.clock, caller.customerId)).toISOString() >= quote.expires_at) throw quoteExpired(quote.expires_at);
    if (minimum !== undefined && BigInt(quote.destination_amount_minor) < minimum) {
      throw new DomainError('MIN_DESTINATION_AMOUNT_NOT_MET', `The order would credit ${formatDecimal(BigInt(quote.destination_amount_minor), destination)} ${destination}, less than minDestinationAmount.`, {
        destination_amount: formatDecimal(BigInt(quote.destination_amount_minor), destination),
        min_destination_amount: formatDecimal(minimum, destination),
      });
    }
    const account = await this.sourceAccount(caller, quote.source_account_id);
    const nowText = now.toISOString();
    const amount = BigInt(quote.source_amount_minor);
    const order: OtcOrdersTable = {
      id: newId(),
      customer_id: caller.customerId,
      quote_id: quote.id,
      status: 'debit_pending',
      source_account_id: account.id,
      wallet_id: quote.wallet_id,
      destination_currency: destination,
      source_amount_minor: amount,
      rate: BigInt(quote.rate),
      destination_amount_minor: BigInt(quote.destination_amount_minor),
      spread_minor: BigInt(quote.spread_minor),
      source_amount_usdc_minor: BigInt(quote.source_amount_usdc_minor),
      transaction_id: newId(),
      travel_rule_payload: input.travelRulePayload == null ? null : JSON.stringify(input.travelRulePayload),
      failure_reason: null,
      debited_at: null,
      settled_at: null,
      created_at: nowText,
      updated_at: nowText,
    };
    // The EUR leaves the account now, into suspense; the debit moves it out, a failure back.
    const movement = moneyMovement(caller.customerId, nowText, 'otc_reserve', order.id, [
      ...accountPostings(account, -amount),
      { account: { kind: 'system', code: 'suspense' }, asset: sourceCurrency, amount },
    ]);
    const { work } = movement;
    work.guards.push({
      table: 'otc_quotes',
      match: { id: quote.id, order_id: null },
      set: { order_id: order.id },
      error: 'QUOTE_ALREADY_CONFIRMED',
      message: quoteConfirmed().message,
      details: {},
    });
    work.rows.push({ table: 'otc_orders', values: order }, ...(await this.timerRows(order.id, caller.customerId, now)));
    work.statementLines.push(
      statementLine({
        id: order.transaction_id,
        customerId: caller.customerId,
        account,
        direction: 'outgoing',
        type: 'otc_exchange',
        amountMinor: amount,
        status: 'pending',
        counterpart: { id: order.wallet_id, type: 'wallet' },
        description: `Exchange into ${formatDecimal(order.destination_amount_minor, destination)} ${destination}`,
        reference: order.id,
        at: nowText,
      }),
    );
    const record = presentOrder(order);
    work.events.push(plannedEvent(caller.customerId, 'otc_order.created', record, nowText));
    await addBalanceEvents(this.storage, this.caches, movement, explainedBy(movement, order.transaction_id));
    if (key) work.answer = plannedAnswer(key, 201, record);
    const result = await executeMoneyMovement(this.storage, movement);
    return { record, answerStored: result.answerBody !== null };
  }

  /**
   * A quote of the caller's as it stands now in its customer's time (a test clock's): what the dashboard shows
   * after requesting it, with the seconds left to confirm it and the order made of it, if any.
   */
  async quoteState(caller: AuthenticatedKey, id: string): Promise<QuoteState> {
    const row = await findQuote(this.storage.db, caller.customerId, id.toLowerCase());
    if (!row) throw notFound('quote');
    const nowMs = (await customerNow(this.customerClocks, this.clock, caller.customerId)).getTime();
    const secondsLeft = Math.max(0, Math.ceil((Date.parse(row.expires_at) - nowMs) / 1000));
    return { quote: presentQuote(row), sourceFrAccountId: row.source_account_id, destinationProviderWalletId: row.wallet_id, orderId: row.order_id, secondsLeft };
  }

  async order(caller: AuthenticatedKey, id: string): Promise<OrderRecord> {
    const row = await findOrder(this.storage.db, caller.customerId, id.toLowerCase());
    if (!row) throw notFound('order');
    return presentOrder(row);
  }

  async orders(caller: AuthenticatedKey, page: number, limit: number) {
    const size = Math.min(limit, pageLimitMax);
    const { rows, total } = await listOrders(this.storage.db, caller.customerId, (page - 1) * size, size);
    return { data: rows.map(presentOrder), meta: { pagination: { page, limit: size, total: Number(total) } } };
  }

  /** An asset the price provider exchanges EUR into, named in any case; anything else is a 400 on `path`. */
  private tradable(text: string, path: string): CryptoAsset {
    const asset = cryptoAssetNamed(text);
    if (asset === undefined || !this.prices.assets.includes(asset)) {
      throw validationError([{ location: 'body', path, reason: `must be one of ${this.prices.assets.join(', ')}` }]);
    }
    return asset;
  }

  /**
   * The caller's EUR account (fiat or virtual) that money may leave; another customer's answers 404, one in another
   * currency 422 CURRENCY_MISMATCH, a frozen or closed one (or one under a frozen or closed master) 422
   * ACCOUNT_NOT_ACTIVE, as for a payment. The confirmation's debit checks the status again in its own statement.
   */
  private async sourceAccount(caller: AuthenticatedKey, id: string): Promise<CustomerAccount> {
    const account = await findCustomerAccount(this.storage, this.caches, caller.customerId, id.toLowerCase());
    if (!account) throw notFound('account');
    if (account.currency !== sourceCurrency) {
      throw new DomainError('CURRENCY_MISMATCH', `The account holds ${account.currency}; an exchange pays from a EUR account.`, { account_currency: account.currency, expected: sourceCurrency });
    }
    requireCanSend(account);
    return account;
  }
}

/** docs/spec.md §8: at least 20 EUR, at most 2 decimals (the pattern checked that); at most what a payment may move. */
function parseSourceAmount(text: string): bigint {
  const cents = parseAmount(text, sourceCurrency);
  const reason =
    cents < parseAmount(otcSourceAmountMinEur, sourceCurrency) ? `must be at least ${otcSourceAmountMinEur} EUR` : cents > parseAmount(paymentAmountMax, sourceCurrency) ? `must be at most ${paymentAmountMax} EUR` : undefined;
  if (reason) throw validationError([{ location: 'body', path: '/sourceAmountEur', reason }]);
  return cents;
}

function parseDestinationMinimum(text: string, asset: CryptoAsset): bigint {
  try {
    return parseAmount(text, asset);
  } catch (error) {
    if (error instanceof AmountError) throw validationError([{ location: 'body', path: '/minDestinationAmount', reason: error.message }]);
    throw error;
  }
}
