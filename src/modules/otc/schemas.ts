import { Type, type Static } from 'typebox';
import {
  assetCodeLengthMax,
  decimalTextLengthMax,
  otcRateDecimals,
  otcSourceAmountLengthMax,
  otcSourceAmountMinEur,
  pageDefault,
  pageLimitDefault,
  pageLimitMax,
  pageMax,
  travelRulePayloadBytesMax,
  travelRulePayloadDepthMax,
} from '../../config/limits.js';
import { jsonLimitsKeyword } from '../../http/request-schema.js';
import { Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';

/** docs/spec.md §4: the asset of GET /otc-exchanges/wallets, 1-10 characters, any case, USDC when omitted. */
export const EligibleWalletsQuery = Type.Object(
  { asset: Type.Optional(Type.String({ minLength: 1, maxLength: assetCodeLengthMax, default: 'USDC' })) },
  { additionalProperties: false },
);

/** docs/spec.md §2 pay-from account item (camelCase). `balance` is what the account can pay, a decimal string. */
export const EligibleAccount = Type.Object(
  { id: Uuid, currency: Type.String(), isMaster: Type.Boolean(), label: Type.String(), balance: Type.String({ description: 'Decimal string: the available balance' }) },
  { title: 'OtcEligibleAccount', additionalProperties: false },
);
export type EligibleAccountRecord = Static<typeof EligibleAccount>;

/** docs/spec.md §2 receive-into wallet item: the wallet's default address of the asset. */
export const EligibleWallet = Type.Object(
  { id: Uuid, label: Type.String(), network: Type.String(), assetAddress: Type.String(), asset: Type.String() },
  { title: 'OtcEligibleWallet', additionalProperties: false },
);
export type EligibleWalletRecord = Static<typeof EligibleWallet>;

/** `buy` is the only side (docs/spec.md §4): any case; `sell` or anything else is a 400. */
const Side = StringEnum(['buy'] as const, { description: 'buy (the only side; the default)' });

/** docs/spec.md §4 POST /otc-exchanges/quote. */
export const QuoteBody = Type.Object(
  {
    sourceFrAccountId: Uuid,
    destinationProviderWalletId: Uuid,
    sourceAmountEur: Type.String({ pattern: '^[0-9]+([.][0-9]{1,2})?$', examples: ['1000.00'], maxLength: otcSourceAmountLengthMax, description: `EUR with at most 2 decimals, at least ${otcSourceAmountMinEur}` }),
    side: Type.Optional(Nullable(Side)),
    destinationCurrency: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: assetCodeLengthMax, description: 'USDC when omitted; any case' }))),
  },
  { title: 'CreateOtcQuoteRequest', additionalProperties: false },
);
export type QuoteInput = Static<typeof QuoteBody>;

/** docs/spec.md §2 OTC quote, exactly. */
export const Quote = Type.Object(
  {
    quoteId: Uuid,
    rate: Type.String({ description: `Decimal string with ${otcRateDecimals} decimals: units of the destination asset per 1 EUR` }),
    destinationAmount: Type.String({ description: 'Decimal string at the scale of the destination asset, rounded down' }),
    sourceCurrency: Type.String({ description: 'EUR' }),
    destinationCurrency: Type.String(),
    ttlExpiresAt: Timestamp,
    ttlSeconds: Type.Integer(),
    indicative: Type.Boolean(),
    sourceAmountEur: Type.String(),
    sourceAmountUsdc: Type.String({ description: 'The EUR amount valued in USDC at the mid rate' }),
  },
  { title: 'OtcQuote', additionalProperties: false },
);
export type QuoteRecord = Static<typeof Quote>;

/** docs/spec.md §4 POST /otc-exchanges; `minDestinationAmount` is additive (a slippage guard). */
export const ConfirmBody = Type.Object(
  {
    quoteId: Uuid,
    side: Type.Optional(Nullable(Side)),
    travelRulePayload: Type.Optional(
      Nullable(
        Type.Unsafe<Record<string, unknown>>({
          type: 'object',
          [jsonLimitsKeyword]: { depthMax: travelRulePayloadDepthMax, bytesMax: travelRulePayloadBytesMax },
          description: `Any JSON object of at most ${travelRulePayloadBytesMax} bytes, stored with the order`,
        }),
      ),
    ),
    minDestinationAmount: Type.Optional(
      Nullable(Type.String({ pattern: '^[0-9]+([.][0-9]+)?$', examples: ['990.5'], maxLength: decimalTextLengthMax, description: 'Refuse (422) if the order would credit less than this' })),
    ),
  },
  { title: 'CreateOtcOrderRequest', additionalProperties: false },
);
export type ConfirmInput = Static<typeof ConfirmBody>;

/** docs/spec.md §2 OTC order (`orderId`, `status`), and additively everything the order holds. */
export const Order = Type.Object(
  {
    orderId: Uuid,
    status: Type.String({ description: 'debit_pending, debited, settled or failed' }),
    quoteId: Uuid,
    sourceFrAccountId: Uuid,
    destinationProviderWalletId: Uuid,
    sourceCurrency: Type.String(),
    destinationCurrency: Type.String(),
    sourceAmountEur: Type.String(),
    sourceAmountUsdc: Type.String(),
    destinationAmount: Type.String(),
    rate: Type.String(),
    transactionId: Uuid,
    failureReason: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    debitedAt: Nullable(Timestamp),
    settledAt: Nullable(Timestamp),
  },
  { title: 'OtcOrder', additionalProperties: false },
);
export type OrderRecord = Static<typeof Order>;

export const OrderParams = Type.Object({ orderId: Uuid }, { additionalProperties: false });

export const OrdersQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: pageMax, default: pageDefault })),
    limit: Type.Optional(Type.Integer({ minimum: 1, default: pageLimitDefault, description: `Clamped to ${pageLimitMax}` })),
  },
  { additionalProperties: false },
);

export const SettleOrderBody = Type.Object({ outcome: StringEnum(['completed', 'failed'] as const) }, { title: 'SandboxSettleOtcOrderRequest', additionalProperties: false });
