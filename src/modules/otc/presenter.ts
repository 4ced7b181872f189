import { assetOf } from '../../ledger/assets.js';
import { formatDecimal } from '../../ledger/money.js';
import type { OtcOrdersTable, OtcQuotesTable } from '../../storage/tables.js';
import { formatRate } from './quote-math.js';
import type { OrderRecord, QuoteRecord } from './schemas.js';

export function presentQuote(row: OtcQuotesTable): QuoteRecord {
  const destination = assetOf(row.destination_currency);
  return {
    quoteId: row.id,
    rate: formatRate(BigInt(row.rate)),
    destinationAmount: formatDecimal(BigInt(row.destination_amount_minor), destination),
    sourceCurrency: 'EUR',
    destinationCurrency: destination,
    ttlExpiresAt: row.expires_at,
    ttlSeconds: row.ttl_seconds,
    indicative: true,
    sourceAmountEur: formatDecimal(BigInt(row.source_amount_minor), 'EUR'),
    sourceAmountUsdc: formatDecimal(BigInt(row.source_amount_usdc_minor), 'USDC'),
  };
}

export function presentOrder(row: OtcOrdersTable): OrderRecord {
  const destination = assetOf(row.destination_currency);
  return {
    orderId: row.id,
    status: row.status,
    quoteId: row.quote_id,
    sourceFrAccountId: row.source_account_id,
    destinationProviderWalletId: row.wallet_id,
    sourceCurrency: 'EUR',
    destinationCurrency: destination,
    sourceAmountEur: formatDecimal(BigInt(row.source_amount_minor), 'EUR'),
    sourceAmountUsdc: formatDecimal(BigInt(row.source_amount_usdc_minor), 'USDC'),
    destinationAmount: formatDecimal(BigInt(row.destination_amount_minor), destination),
    rate: formatRate(BigInt(row.rate)),
    transactionId: row.transaction_id,
    failureReason: row.failure_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    debitedAt: row.debited_at,
    settledAt: row.settled_at,
  };
}
