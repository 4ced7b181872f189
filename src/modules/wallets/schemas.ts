import { Type, type Static } from 'typebox';
import {
  assetCodeLengthMax,
  decimalTextLengthMax,
  pageLimitDefault,
  pageLimitMax,
  pageMax,
  walletAssetLengthMax,
  walletDisplayNameLengthMax,
  walletNetworkLengthMax,
  walletTransferDestinationLengthMax,
  walletTransferDestinationLengthMin,
  walletTransferNoteLengthMax,
} from '../../config/limits.js';
import { Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { supportedPairsText } from '../../ledger/networks.js';

/** docs/spec.md §4 POST /wallets: every field optional; `null` means absent (docs/decisions/0005-request-input-rules.md). */
export const CreateWalletBody = Type.Object(
  {
    endUserId: Type.Optional(Nullable(Uuid)),
    umbrellaLinkId: Type.Optional(Uuid),
    displayName: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: walletDisplayNameLengthMax }))),
  },
  { title: 'CreateWalletRequest', additionalProperties: false },
);
export type CreateWalletInput = Static<typeof CreateWalletBody>;

/** docs/spec.md §4 POST /wallets/{walletId}/addresses. The pair must be in the catalogue; codes match in any case. */
export const CreateWalletAddressBody = Type.Object(
  {
    asset: Type.String({ minLength: 1, maxLength: walletAssetLengthMax, description: `Supported pairs: ${supportedPairsText()}`, examples: ['USDC'] }),
    network: Type.String({ minLength: 1, maxLength: walletNetworkLengthMax, description: 'A network code or its long name, in any case (ETH or ethereum)', examples: ['ETH'] }),
  },
  { title: 'CreateWalletAddressRequest', additionalProperties: false },
);
export type CreateWalletAddressInput = Static<typeof CreateWalletAddressBody>;

/** docs/spec.md §2 wallet record; `fr_wallet_id`, `end_user_id`, `umbrella_link_id` and the timestamps are additive. */
export const Wallet = Type.Object(
  {
    local_id: Uuid,
    provider: Type.String({ description: 'The custodian holding the keys (sandbox: "sandbox")' }),
    display_name: Type.String(),
    status: Type.String({ description: 'active' }),
    currency: Type.String({ description: 'USDC' }),
    deposit_address: Type.String({ description: "The wallet's default USDC address on ETH" }),
    fr_wallet_id: Type.String({ description: 'Provider id, prefix wal_' }),
    end_user_id: Nullable(Uuid),
    umbrella_link_id: Nullable(Uuid),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Wallet', additionalProperties: false },
);
export type WalletRecord = Static<typeof Wallet>;

/** docs/spec.md §2 wallet receive address; `wallet_id` and `created_at` are additive. */
export const WalletAddress = Type.Object(
  {
    local_id: Uuid,
    asset: Type.String(),
    network: Type.String(),
    address: Type.String(),
    is_default: Type.Boolean({ description: 'The first address of an asset in a wallet is its default' }),
    wallet_id: Uuid,
    created_at: Timestamp,
  },
  { title: 'WalletAddress', additionalProperties: false },
);
export type WalletAddressRecord = Static<typeof WalletAddress>;

/** What a wallet holds of one asset, as decimal strings at the asset's scale. */
const WalletBalance = Type.Object(
  {
    asset: Type.String(),
    balance: Type.String({ description: 'Decimal string: everything the wallet holds of the asset' }),
    available: Type.String({ description: 'Decimal string: the balance less what pending transfers reserve' }),
  },
  { additionalProperties: false },
);
export type WalletBalanceRecord = Static<typeof WalletBalance>;

/** GET /wallets/{id} (additive): the wallet with its receive addresses, oldest first, and a balance per asset it has an address for. */
export const WalletDetail = Type.Object(
  { ...Wallet.properties, addresses: Type.Array(WalletAddress), balances: Type.Array(WalletBalance) },
  { title: 'WalletDetail', additionalProperties: false },
);
export type WalletDetailRecord = Static<typeof WalletDetail>;

export const WalletParams = Type.Object({ walletId: Uuid }, { additionalProperties: false });

/** docs/spec.md §4: a decimal string of digits, optionally a point and more digits (no sign, no exponent). */
const DecimalText = Type.String({ pattern: '^[0-9]+([.][0-9]+)?$', examples: ['12.5'], maxLength: decimalTextLengthMax, description: 'Decimal string in units of the asset, e.g. "12.5"; at most its decimals' });

const assetField = Type.String({ minLength: 1, maxLength: walletAssetLengthMax, description: `Supported pairs: ${supportedPairsText()}`, examples: ['USDC'] });
const networkField = Type.String({ minLength: 1, maxLength: walletNetworkLengthMax, description: 'A network code or its long name, in any case', examples: ['ETH'] });

/** docs/spec.md §4 POST /wallets/{walletId}/transfers. */
export const CreateWalletTransferBody = Type.Object(
  {
    asset: assetField,
    network: networkField,
    amount: DecimalText,
    destination: Type.String({
      minLength: walletTransferDestinationLengthMin,
      maxLength: walletTransferDestinationLengthMax,
      description: 'An address of the network (EVM: lower case or a correct EIP-55 checksum)',
    }),
    note: Type.Optional(Nullable(Type.String({ maxLength: walletTransferNoteLengthMax }))),
  },
  {
    title: 'CreateWalletTransferRequest',
    additionalProperties: false,
    examples: [{ asset: 'USDC', network: 'ETH', amount: '125.50', destination: '0x52908400098527886e0f7030069857d2e4169ee7', note: 'Supplier payout' }],
  },
);
export type CreateWalletTransferInput = Static<typeof CreateWalletTransferBody>;

/** POST /sandbox/wallets/{id}/deposits (docs/architecture.md, Sandbox simulation): the amount as a decimal string, or a JSON number. */
export const WalletDepositBody = Type.Object(
  { asset: assetField, network: networkField, amount: Type.Union([DecimalText, Type.Number({ exclusiveMinimum: 0 })]) },
  { title: 'SandboxCreateWalletDepositRequest', additionalProperties: false },
);
export type WalletDepositInput = Static<typeof WalletDepositBody>;

export const SettleWalletTransferBody = Type.Object({ outcome: StringEnum(['completed', 'failed'] as const) }, { title: 'SandboxSettleWalletTransferRequest', additionalProperties: false });

/** docs/spec.md §2 wallet transfer (creation response); everything after `destination` is additive. */
export const WalletTransfer = Type.Object(
  {
    local_id: Uuid,
    status: Type.String({ description: 'pending, then completed or failed' }),
    amount: Type.String({ description: 'Decimal string at the scale of the asset' }),
    asset: Type.String(),
    network: Type.String(),
    destination: Type.String({ description: "The recipient's address (a deposit: the wallet's own)" }),
    wallet_id: Uuid,
    direction: Type.String({ description: 'outgoing (a transfer) or incoming (a deposit)' }),
    note: Nullable(Type.String()),
    tx_hash: Nullable(Type.String({ description: 'The on-chain transaction id once completed, in the format of the network' })),
    failure_reason: Nullable(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
    completed_at: Nullable(Timestamp),
  },
  { title: 'WalletTransfer', additionalProperties: false },
);
export type WalletTransferRecord = Static<typeof WalletTransfer>;

export const WalletTransferParams = Type.Object({ transferId: Uuid }, { additionalProperties: false });

export const WalletTransfersQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: pageMax, default: 1 })),
    // Like GET /transactions (docs/spec.md §4 rule 5): a larger limit is clamped, not refused.
    limit: Type.Optional(Type.Integer({ minimum: 1, default: pageLimitDefault, description: `Clamped to ${pageLimitMax}` })),
  },
  { additionalProperties: false },
);

/** The live balance of docs/spec.md §4 (scope otc-exchanges:read): `asset` in any case, USDC when omitted. */
export const LiveBalanceQuery = Type.Object(
  { asset: Type.Optional(Type.String({ minLength: 1, maxLength: assetCodeLengthMax, default: 'USDC' })) },
  { additionalProperties: false },
);
export const LiveBalance = Type.Object(
  { walletId: Uuid, asset: Type.String(), balance: Type.String(), available: Type.String() },
  { title: 'WalletBalance', additionalProperties: false },
);
export type LiveBalanceRecord = Static<typeof LiveBalance>;
