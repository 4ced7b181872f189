import { defaultWalletAsset } from '../../ledger/networks.js';
import type { WalletAddressRow, WalletRow } from './repository.js';
import type { WalletAddressRecord, WalletRecord } from './schemas.js';

export function presentWallet(row: WalletRow): WalletRecord {
  return {
    local_id: row.id,
    provider: row.provider,
    display_name: row.display_name,
    status: row.status,
    currency: defaultWalletAsset,
    deposit_address: row.deposit_address,
    fr_wallet_id: row.fr_wallet_id,
    end_user_id: row.end_user_id,
    umbrella_link_id: row.umbrella_link_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function presentWalletAddress(row: WalletAddressRow): WalletAddressRecord {
  return {
    local_id: row.id,
    asset: row.asset,
    network: row.network,
    address: row.address,
    is_default: Boolean(row.is_default),
    wallet_id: row.wallet_id,
    created_at: row.created_at,
  };
}
