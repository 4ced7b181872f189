import type { Kysely } from 'kysely';
import type { Database, OtcOrdersTable, OtcQuotesTable } from '../../storage/tables.js';
import { newestFirstPage } from '../../storage/newest-first-page.js';

/** Reads of the OTC tables, always scoped to the customer: another customer's rows answer like unknown ones. */

type Db = Kysely<Database>;

export interface EligibleAccountRow {
  id: string;
  currency: string;
  is_master: boolean;
  account_name: string;
  available_minor: bigint;
}

/**
 * The customer's fiat accounts and virtual accounts in `currency` that money may leave (active, and a virtual
 * account's master too), fiat first, each oldest first.
 */
export async function accountsIn(db: Db, customerId: string, currency: string): Promise<EligibleAccountRow[]> {
  const fiat = await db
    .selectFrom('fiat_accounts')
    .select(['id', 'currency', 'is_master', 'account_name', 'balance_minor', 'allocated_minor'])
    .where('customer_id', '=', customerId)
    .where('currency', '=', currency)
    .where('status', '=', 'active')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const virtual = await db
    .selectFrom('virtual_accounts')
    .innerJoin('fiat_accounts as master', 'master.id', 'virtual_accounts.master_fiat_account_id')
    .select(['virtual_accounts.id', 'virtual_accounts.currency', 'virtual_accounts.account_name', 'virtual_accounts.balance_minor'])
    .where('virtual_accounts.customer_id', '=', customerId)
    .where('virtual_accounts.currency', '=', currency)
    .where('virtual_accounts.status', '=', 'active')
    .where('master.status', '=', 'active')
    .orderBy('virtual_accounts.created_at')
    .orderBy('virtual_accounts.id')
    .execute();
  return [
    // A fiat account pays from what its virtual accounts do not hold.
    ...fiat.map((row) => ({ id: row.id, currency: row.currency, is_master: Boolean(row.is_master), account_name: row.account_name, available_minor: BigInt(row.balance_minor) - BigInt(row.allocated_minor) })),
    ...virtual.map((row) => ({ id: row.id, currency: row.currency, is_master: false, account_name: row.account_name, available_minor: BigInt(row.balance_minor) })),
  ];
}

export interface EligibleWalletRow {
  id: string;
  display_name: string;
  network: string;
  address: string;
  asset: string;
}

/** The customer's wallets that hold `asset` (have an address for it), with the asset's default address, oldest first. */
export async function walletsReceiving(db: Db, customerId: string, asset: string): Promise<EligibleWalletRow[]> {
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

export async function findQuote(db: Db, customerId: string, id: string): Promise<OtcQuotesTable | undefined> {
  return db.selectFrom('otc_quotes').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}

export async function findOrder(db: Db, customerId: string, id: string): Promise<OtcOrdersTable | undefined> {
  return db.selectFrom('otc_orders').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}

/** The order a liquidity provider reports on: its reference in provider events is the order's id, whoever's it is. */
export async function findOrderByReference(db: Db, id: string): Promise<OtcOrdersTable | undefined> {
  return db.selectFrom('otc_orders').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The customer's orders, newest first. */
export async function listOrders(db: Db, customerId: string, offset: number, limit: number): Promise<{ rows: OtcOrdersTable[]; total: bigint }> {
  return newestFirstPage<OtcOrdersTable>(db.selectFrom('otc_orders').where('customer_id', '=', customerId), offset, limit);
}
