import type { CryptoAsset } from '../ledger/assets.js';
import type { Network } from '../ledger/networks.js';

/** The custody side of the provider (docs/architecture.md, Layers): it holds the wallets' keys and makes their addresses. */

export interface CreateWalletRequest {
  ownerBusinessId: string;
  displayName: string;
  /** The asset and network of the wallet's deposit address, made with the wallet. */
  asset: CryptoAsset;
  network: Network;
}

export interface CreatedWallet {
  frWalletId: string;
  /** The custodian's name, shown as the wallet record's `provider`. */
  provider: string;
  depositAddress: string;
}

export interface CreateAddressRequest {
  frWalletId: string;
  asset: CryptoAsset;
  network: Network;
}

/** An address receives one asset on one network; on EVM chains and Tron one address may receive several tokens. */
export interface CreatedAddress {
  address: string;
  asset: CryptoAsset;
  network: Network;
}

/** How a created address is named in `provider_operations`: the address alone would not say which asset to retire. */
export function addressObjectId(created: CreatedAddress): string {
  return `${created.asset}:${created.network}:${created.address}`;
}

export function parseAddressObjectId(objectId: string): CreatedAddress {
  const [asset, network, address] = objectId.split(':') as [CryptoAsset, Network, string];
  return { asset, network, address };
}

/**
 * A transfer's settlement on the chain is reported as a provider event (`wallet_transfer.completed` with its
 * transaction id, or `wallet_transfer.failed`) into the inbox (docs/providers.md "Reporting outcomes").
 *
 * Like the bank, calls that create take an idempotency key and have an undo (providers/provisioning.ts): a wallet is
 * archived, an address retired for its asset (an address on a chain cannot be deleted; the custodian stops
 * crediting that asset to the wallet).
 */
export interface CustodyProvider {
  createWallet(request: CreateWalletRequest, idempotencyKey: string): Promise<CreatedWallet>;
  archiveWallet(frWalletId: string): Promise<void>;
  createAddress(request: CreateAddressRequest, idempotencyKey: string): Promise<CreatedAddress>;
  retireAddress(address: CreatedAddress): Promise<void>;
}
