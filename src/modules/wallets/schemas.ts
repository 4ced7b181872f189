import { Type, type Static } from 'typebox';
import { walletAssetLengthMax, walletDisplayNameLengthMax, walletNetworkLengthMax } from '../../config/limits.js';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { supportedPairsText } from '../../ledger/networks.js';

/** Spec §4 POST /wallets: every field optional; `null` means absent (docs/decisions/0005-request-input-rules.md). */
export const CreateWalletBody = Type.Object(
  {
    endUserId: Type.Optional(Nullable(Uuid)),
    umbrellaLinkId: Type.Optional(Uuid),
    displayName: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: walletDisplayNameLengthMax }))),
  },
  { additionalProperties: false },
);
export type CreateWalletInput = Static<typeof CreateWalletBody>;

/** Spec §4 POST /wallets/{walletId}/addresses. The pair must be in the catalogue; codes match in any case. */
export const CreateWalletAddressBody = Type.Object(
  {
    asset: Type.String({ minLength: 1, maxLength: walletAssetLengthMax, description: `Supported pairs: ${supportedPairsText()}` }),
    network: Type.String({ minLength: 1, maxLength: walletNetworkLengthMax, description: 'A network code or its long name, in any case (ETH or ethereum)' }),
  },
  { additionalProperties: false },
);
export type CreateWalletAddressInput = Static<typeof CreateWalletAddressBody>;

/** Spec §2 wallet record; `fr_wallet_id`, `end_user_id`, `umbrella_link_id` and the timestamps are additive. */
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
  { additionalProperties: false },
);
export type WalletRecord = Static<typeof Wallet>;

/** Spec §2 wallet receive address; `wallet_id` and `created_at` are additive. */
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
  { additionalProperties: false },
);
export type WalletAddressRecord = Static<typeof WalletAddress>;

/** GET /wallets/{id} (additive): the wallet with its receive addresses, oldest first. */
export const WalletDetail = Type.Object({ ...Wallet.properties, addresses: Type.Array(WalletAddress) }, { additionalProperties: false });
export type WalletDetailRecord = Static<typeof WalletDetail>;

export const WalletParams = Type.Object({ walletId: Uuid }, { additionalProperties: false });
