import type { Clock } from '../../clock.js';
import { addressesPerWalletMax, walletsPerCustomerMax } from '../../config/limits.js';
import { DomainError, notFound, validationError } from '../../errors.js';
import { newId } from '../../ids.js';
import { canonicalAddress } from '../../ledger/address-formats.js';
import {
  addressFormatOf,
  cryptoAssetNamed,
  defaultWalletAsset,
  defaultWalletNetwork,
  supportedPair,
  supportedPairsText,
  type Network,
} from '../../ledger/networks.js';
import type { OnCreated } from '../../storage/idempotency-answers.js';
import { cryptoAssets } from '../../ledger/assets.js';
import { providerUnavailable, type Provisioning } from '../../providers/provisioning.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import type { EndUserService } from '../end-users/index.js';
import { presentWallet, presentWalletAddress, presentWalletBalance } from './presenter.js';
import {
  addressCounts,
  countWallets,
  findWallet,
  findWalletBalance,
  insertWallet,
  insertWalletAddress,
  listWalletAddresses,
  listWalletBalances,
  listWallets,
  lockWallet,
  pageOfWallets,
  type WalletAddressRow,
  type WalletRow,
} from './repository.js';
import type { CreateWalletAddressInput, CreateWalletInput, LiveBalanceRecord, WalletAddressRecord, WalletDetailRecord, WalletRecord } from './schemas.js';

/** docs/spec.md §4 shows no default for displayName; the record's display_name is a string, so a wallet is named. */
const defaultWalletDisplayName = 'USDC wallet';

/** The custodian's address in canonical form; one that is not valid for its network is the provider's failure. */
function addressFromCustodian(network: Network, address: string): string {
  const canonical = canonicalAddress(addressFormatOf(network), address);
  if (canonical === undefined) throw providerUnavailable();
  return canonical;
}

const walletLimitReached = () =>
  new DomainError('LIMIT_EXCEEDED', `A customer has at most ${walletsPerCustomerMax} wallets.`, { limit: walletsPerCustomerMax });
const addressLimitReached = () =>
  new DomainError('LIMIT_EXCEEDED', `A wallet has at most ${addressesPerWalletMax} receive addresses.`, { limit: addressesPerWalletMax });

/** Whether the customer's wallet has an address receiving `asset` (its balance row of the asset exists from then on). */
export async function walletReceives(storage: Storage, customerId: string, walletId: string, asset: string): Promise<boolean> {
  return (await findWalletBalance(storage.db, customerId, walletId, asset)) !== undefined;
}

export class WalletService {
  constructor(
    private readonly storage: Storage,
    private readonly provisioning: Provisioning,
    private readonly clock: Clock,
    private readonly endUsers: EndUserService,
  ) {}

  /** `onCreated` runs in the transaction that writes the wallet (an Idempotency-Key's answer is stored there). */
  async create(caller: AuthenticatedKey, input: CreateWalletInput, onCreated?: OnCreated<WalletRecord>): Promise<WalletRecord> {
    // Another customer's end user answers 404 like an unknown one.
    const endUser = input.endUserId == null ? undefined : await this.endUsers.require(caller, input.endUserId);
    // Checked before the provider call only: concurrent creations may end a few over it, which the bound on the size
    // of the collection tolerates (unlike an address's default, which the wallet's lock decides).
    if ((await countWallets(this.storage.db, caller.customerId)) >= walletsPerCustomerMax) throw walletLimitReached();
    const displayName = input.displayName ?? defaultWalletDisplayName;
    const request = { ownerBusinessId: caller.frOwnerBusinessId, displayName, asset: defaultWalletAsset, network: defaultWalletNetwork };
    return this.provisioning.create(caller.customerId, 'create_wallet', request, async (created, markDone) => {
      const now = this.clock.now().toISOString();
      const wallet: WalletRow = {
        id: newId(),
        customer_id: caller.customerId,
        fr_wallet_id: created.frWalletId,
        provider: created.provider,
        display_name: displayName,
        status: 'active',
        end_user_id: endUser?.id ?? null,
        umbrella_link_id: input.umbrellaLinkId?.toLowerCase() ?? null,
        created_at: now,
        updated_at: now,
        deposit_address: addressFromCustodian(defaultWalletNetwork, created.depositAddress),
      };
      const { deposit_address: address, ...walletColumns } = wallet;
      const depositAddress: WalletAddressRow = {
        id: newId(),
        customer_id: caller.customerId,
        wallet_id: wallet.id,
        asset: defaultWalletAsset,
        network: defaultWalletNetwork,
        address,
        is_default: 1,
        created_at: now,
      };
      const record = presentWallet(wallet);
      await this.storage.transaction(async (trx) => {
        await insertWallet(trx, walletColumns, depositAddress);
        await markDone(trx);
        await onCreated?.(trx, record);
      });
      return record;
    });
  }

  async list(caller: AuthenticatedKey): Promise<WalletRecord[]> {
    return (await listWallets(this.storage.db, caller.customerId)).map(presentWallet);
  }

  /** A page of the caller's wallets, newest first, with the API's pagination figures (the dashboard's list). */
  async page(caller: AuthenticatedKey, page: number, limit: number): Promise<{ data: WalletRecord[]; pagination: { page: number; limit: number; total: number } }> {
    const { rows, total } = await pageOfWallets(this.storage.db, caller.customerId, (page - 1) * limit, limit);
    return { data: rows.map(presentWallet), pagination: { page, limit, total: Number(total) } };
  }

  async get(caller: AuthenticatedKey, id: string): Promise<WalletDetailRecord> {
    const wallet = await this.require(caller, id);
    const addresses = await listWalletAddresses(this.storage.db, caller.customerId, wallet.id);
    const balances = await listWalletBalances(this.storage.db, caller.customerId, wallet.id);
    return { ...presentWallet(wallet), addresses: addresses.map(presentWalletAddress), balances: balances.map(presentWalletBalance) };
  }

  /**
   * The live balance of docs/spec.md §4: what the wallet holds of the asset and what of it is available (not reserved by
   * pending transfers). An asset the wallet has no address for is held at zero.
   */
  async liveBalance(caller: AuthenticatedKey, walletId: string, assetText: string): Promise<LiveBalanceRecord> {
    const asset = cryptoAssetNamed(assetText);
    if (asset === undefined) {
      throw validationError([{ location: 'query', path: '/asset', reason: `must be one of ${cryptoAssets.join(', ')}` }]);
    }
    const wallet = await this.require(caller, walletId);
    const row = await findWalletBalance(this.storage.db, caller.customerId, wallet.id, asset);
    return { walletId: wallet.id, ...presentWalletBalance(row ?? { asset, balance_minor: 0n, reserved_minor: 0n }) };
  }

  /**
   * A new receive address; the first of its asset in the wallet becomes the asset's default. `onCreated` runs in the
   * transaction that writes it (an Idempotency-Key's answer is stored there).
   */
  async addAddress(caller: AuthenticatedKey, walletId: string, input: CreateWalletAddressInput, onCreated?: OnCreated<WalletAddressRecord>): Promise<WalletAddressRecord> {
    const pair = supportedPair(input.asset, input.network);
    if (!pair) {
      throw validationError(
        [{ location: 'body', path: '', reason: `${input.asset} on ${input.network} is not supported; supported pairs: ${supportedPairsText()}` }],
        `Unsupported asset and network. Supported pairs: ${supportedPairsText()}.`,
      );
    }
    const wallet = await this.require(caller, walletId);
    if ((await listWalletAddresses(this.storage.db, caller.customerId, wallet.id)).length >= addressesPerWalletMax) throw addressLimitReached();
    const request = { frWalletId: wallet.fr_wallet_id, asset: pair.asset, network: pair.network };
    return this.provisioning.create(caller.customerId, 'create_address', request, async (created, markDone) => {
      const address = addressFromCustodian(pair.network, created.address);
      return this.storage.transaction(async (trx) => {
        await lockWallet(trx, caller.customerId, wallet.id, this.clock.now().toISOString());
        // Taken after the lock: an address made while another request held it is the later one.
        const now = this.clock.now().toISOString();
        const counts = await addressCounts(trx, caller.customerId, wallet.id, pair.asset);
        // Re-checked under the wallet's lock: concurrent requests may all have passed the check above.
        if (counts.total >= addressesPerWalletMax) throw addressLimitReached();
        const row: WalletAddressRow = {
          id: newId(),
          customer_id: caller.customerId,
          wallet_id: wallet.id,
          asset: pair.asset,
          network: pair.network,
          address,
          is_default: counts.ofAsset === 0 ? 1 : 0,
          created_at: now,
        };
        await insertWalletAddress(trx, row);
        await markDone(trx);
        const record = presentWalletAddress(row);
        await onCreated?.(trx, record);
        return record;
      });
    });
  }

  private async require(caller: AuthenticatedKey, id: string): Promise<WalletRow> {
    const wallet = await findWallet(this.storage.db, caller.customerId, id.toLowerCase());
    if (!wallet) throw notFound('wallet');
    return wallet;
  }
}
