import type { Kysely, Selectable, Transaction } from 'kysely';
import { defaultWalletAsset } from '../../ledger/networks.js';
import type { Database, WalletAddressesTable, WalletBalancesTable, WalletsTable, WalletTransfersTable } from '../../storage/tables.js';
import { newestFirstPage } from '../../storage/newest-first-page.js';

export type WalletAddressRow = Selectable<WalletAddressesTable>;
export type WalletBalanceRow = Selectable<WalletBalancesTable>;
export type WalletTransferRow = Selectable<WalletTransfersTable>;
/** A wallet with its deposit address: the default address of the wallet's own asset (USDC), made with the wallet. */
export type WalletRow = Selectable<WalletsTable> & { deposit_address: string };
type Db = Kysely<Database> | Transaction<Database>;

function walletsWithDepositAddress(db: Db, customerId: string) {
  return db
    .selectFrom('wallets')
    .innerJoin('wallet_addresses', (join) =>
      join.onRef('wallet_addresses.wallet_id', '=', 'wallets.id').on('wallet_addresses.asset', '=', defaultWalletAsset).on('wallet_addresses.is_default', '=', 1),
    )
    .selectAll('wallets')
    .select('wallet_addresses.address as deposit_address')
    .where('wallets.customer_id', '=', customerId);
}

export async function listWallets(db: Db, customerId: string): Promise<WalletRow[]> {
  return walletsWithDepositAddress(db, customerId).orderBy('wallets.created_at', 'asc').orderBy('wallets.id', 'asc').execute();
}

/** A page of the customer's wallets, newest first, and how many there are (the dashboard's list). */
export async function pageOfWallets(db: Db, customerId: string, offset: number, limit: number): Promise<{ rows: WalletRow[]; total: bigint }> {
  const counted = await db.selectFrom('wallets').where('customer_id', '=', customerId).select((eb) => eb.fn.countAll<bigint>().as('total')).executeTakeFirstOrThrow();
  const rows = await walletsWithDepositAddress(db, customerId).orderBy('wallets.created_at', 'desc').orderBy('wallets.id', 'desc').limit(limit).offset(offset).execute();
  return { rows, total: BigInt(counted.total) };
}

export async function findWallet(db: Db, customerId: string, id: string): Promise<WalletRow | undefined> {
  return walletsWithDepositAddress(db, customerId).where('wallets.id', '=', id).executeTakeFirst();
}

export async function countWallets(db: Db, customerId: string): Promise<number> {
  const { count } = await db.selectFrom('wallets').select((eb) => eb.fn.countAll<string | number | bigint>().as('count')).where('customer_id', '=', customerId).executeTakeFirstOrThrow();
  return Number(count);
}

export async function listWalletAddresses(db: Db, customerId: string, walletId: string): Promise<WalletAddressRow[]> {
  return db.selectFrom('wallet_addresses').selectAll().where('customer_id', '=', customerId).where('wallet_id', '=', walletId).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
}

export async function insertWallet(trx: Transaction<Database>, wallet: Selectable<WalletsTable>, depositAddress: WalletAddressRow): Promise<void> {
  await trx.insertInto('wallets').values(wallet).execute();
  await insertWalletAddress(trx, depositAddress);
}

/**
 * Takes the wallet's row lock (both dialects: an update) so that concurrent address requests for one wallet take
 * turns: the count against the limit and "first of its asset is the default" stay true under concurrency.
 */
export async function lockWallet(trx: Transaction<Database>, customerId: string, walletId: string, updatedAt: string): Promise<void> {
  await trx.updateTable('wallets').set({ updated_at: updatedAt }).where('customer_id', '=', customerId).where('id', '=', walletId).execute();
}

export async function addressCounts(trx: Transaction<Database>, customerId: string, walletId: string, asset: string): Promise<{ total: number; ofAsset: number }> {
  const rows = await trx.selectFrom('wallet_addresses').select('asset').where('customer_id', '=', customerId).where('wallet_id', '=', walletId).execute();
  return { total: rows.length, ofAsset: rows.filter((row) => row.asset === asset).length };
}

/** The first address of an asset (its default) also opens the wallet's balance of the asset: a wallet holds what it can receive. */
export async function insertWalletAddress(trx: Transaction<Database>, row: WalletAddressRow): Promise<void> {
  await trx.insertInto('wallet_addresses').values(row).execute();
  if (row.is_default !== 1) return;
  await trx
    .insertInto('wallet_balances')
    .values({ wallet_id: row.wallet_id, asset: row.asset, customer_id: row.customer_id, balance_minor: 0n, reserved_minor: 0n, updated_at: row.created_at })
    .execute();
}

export async function listWalletBalances(db: Db, customerId: string, walletId: string): Promise<WalletBalanceRow[]> {
  return db.selectFrom('wallet_balances').selectAll().where('customer_id', '=', customerId).where('wallet_id', '=', walletId).orderBy('asset').execute();
}

export async function findWalletBalance(db: Db, customerId: string, walletId: string, asset: string): Promise<WalletBalanceRow | undefined> {
  return db.selectFrom('wallet_balances').selectAll().where('customer_id', '=', customerId).where('wallet_id', '=', walletId).where('asset', '=', asset).executeTakeFirst();
}

/** The wallet's address receiving `asset` on `network`: the asset's default when it is on that network, else the oldest. */
export async function findReceiveAddress(db: Db, customerId: string, walletId: string, asset: string, network: string): Promise<WalletAddressRow | undefined> {
  return db
    .selectFrom('wallet_addresses')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('wallet_id', '=', walletId)
    .where('asset', '=', asset)
    .where('network', '=', network)
    .orderBy('is_default', 'desc')
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .executeTakeFirst();
}

/** The address a custodian names in a deposit it reports, for that asset and network, whoever's it is. */
export async function findAddressOfDeposit(db: Db, address: string, asset: string, network: string): Promise<WalletAddressRow | undefined> {
  return db.selectFrom('wallet_addresses').selectAll().where('address', '=', address).where('asset', '=', asset).where('network', '=', network).executeTakeFirst();
}

/** Where a wallet receives `asset` when no address is asked for: the asset's default address (every wallet has one). */
export async function defaultWalletAddress(db: Db, walletId: string, asset: string): Promise<Pick<WalletAddressRow, 'network' | 'address'>> {
  return db
    .selectFrom('wallet_addresses')
    .select(['network', 'address'])
    .where('wallet_id', '=', walletId)
    .where('asset', '=', asset)
    .where('is_default', '=', 1)
    .executeTakeFirstOrThrow();
}

export async function findWalletTransfer(db: Db, customerId: string, id: string): Promise<WalletTransferRow | undefined> {
  return db.selectFrom('wallet_transfers').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}

/** The transfer the custodian knows by `frTransferId` (its reference in provider events), whoever's it is. */
export async function findWalletTransferByReference(db: Db, frTransferId: string): Promise<WalletTransferRow | undefined> {
  return db.selectFrom('wallet_transfers').selectAll().where('fr_transfer_id', '=', frTransferId).executeTakeFirst();
}

/** A wallet's transfers and deposits, newest first. */
export async function listWalletTransfers(db: Db, customerId: string, walletId: string, offset: number, limit: number): Promise<{ rows: WalletTransferRow[]; total: bigint }> {
  return newestFirstPage<WalletTransferRow>(db.selectFrom('wallet_transfers').where('customer_id', '=', customerId).where('wallet_id', '=', walletId), offset, limit);
}

/** The customer's wallets that hold `asset` (have an address for it), with the asset's default address, oldest first. */
export async function walletsReceiving(db: Kysely<Database>, customerId: string, asset: string) {
  return db
    .selectFrom('wallets')
    .innerJoin('wallet_addresses', (join) =>
      join.onRef('wallet_addresses.wallet_id', '=', 'wallets.id').on('wallet_addresses.asset', '=', asset).on('wallet_addresses.is_default', '=', 1),
    )
    .select(['wallets.id', 'wallets.display_name', 'wallet_addresses.network', 'wallet_addresses.address', 'wallet_addresses.asset'])
    .where('wallets.customer_id', '=', customerId)
    .orderBy('wallets.created_at')
    .orderBy('wallets.id')
    .execute();
}
