import { assetOf } from '../../ledger/assets.js';
import { formatDecimal } from '../../ledger/money.js';
import { defaultWalletAsset } from '../../ledger/networks.js';
import type { WalletAddressRow, WalletBalanceRow, WalletRow, WalletTransferRow } from './repository.js';
import type { WalletAddressRecord, WalletBalanceRecord, WalletRecord, WalletTransferRecord } from './schemas.js';

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

/** Decimal strings at the asset's scale; `available` is what pending transfers have not reserved. */
export function presentWalletBalance(row: Pick<WalletBalanceRow, 'asset' | 'balance_minor' | 'reserved_minor'>): WalletBalanceRecord {
  const asset = assetOf(row.asset);
  const balance = BigInt(row.balance_minor);
  return { asset, balance: formatDecimal(balance, asset), available: formatDecimal(balance - BigInt(row.reserved_minor), asset) };
}

export function presentWalletTransfer(row: WalletTransferRow): WalletTransferRecord {
  return {
    local_id: row.id,
    status: row.status,
    amount: formatDecimal(BigInt(row.amount_minor), assetOf(row.asset)),
    asset: row.asset,
    network: row.network,
    destination: row.destination,
    wallet_id: row.wallet_id,
    direction: row.direction,
    note: row.note,
    tx_hash: row.tx_hash,
    failure_reason: row.failure_reason,
    created_at: row.created_at,
    updated_at: row.updated_at,
    completed_at: row.completed_at,
  };
}
