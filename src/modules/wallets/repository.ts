import type { Kysely, Selectable, Transaction } from 'kysely';
import { defaultWalletAsset } from '../../ledger/networks.js';
import type { Database, WalletAddressesTable, WalletsTable } from '../../storage/tables.js';

export type WalletAddressRow = Selectable<WalletAddressesTable>;
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
  await trx.insertInto('wallet_addresses').values(depositAddress).execute();
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

export async function insertWalletAddress(trx: Transaction<Database>, row: WalletAddressRow): Promise<void> {
  await trx.insertInto('wallet_addresses').values(row).execute();
}
