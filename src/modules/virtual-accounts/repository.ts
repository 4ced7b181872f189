import type { Kysely, Transaction } from 'kysely';
import { queryTemplate } from '../../storage/query-template.js';
import { newestFirstPage } from '../../storage/newest-first-page.js';
import type { Database, VirtualAccountsTable } from '../../storage/tables.js';

export type VirtualAccountRow = VirtualAccountsTable;

/** A virtual account with its master's status (the master holds its money) and its customer's provider id (its record carries it). */
export type VirtualAccountWithOwner = VirtualAccountRow & { master_status: string; fr_owner_business_id: string };

// Every payment from or to a virtual account looks it up (accounts/customer-accounts.ts): compiled once, one read.
const virtualAccountOfCustomer = queryTemplate<{ customerId: string; id: string }>()(['customerId', 'id'], (db, { customerId, id }) =>
  db
    .selectFrom('virtual_accounts')
    .innerJoin('fiat_accounts', 'fiat_accounts.id', 'virtual_accounts.master_fiat_account_id')
    .innerJoin('customers', 'customers.id', 'virtual_accounts.customer_id')
    .selectAll('virtual_accounts')
    .select(['fiat_accounts.status as master_status', 'customers.fr_owner_business_id'])
    .where('virtual_accounts.customer_id', '=', customerId)
    .where('virtual_accounts.id', '=', id),
);

/** The caller's virtual account with its master's status and its owner's provider id, or undefined (another customer's answers like an unknown one). */
export async function virtualAccountWithOwner(db: Kysely<Database>, customerId: string, id: string): Promise<VirtualAccountWithOwner | undefined> {
  return virtualAccountOfCustomer.executeTakeFirst(db, { customerId, id });
}
type Db = Kysely<Database> | Transaction<Database>;

export async function insertVirtualAccount(trx: Transaction<Database>, row: VirtualAccountRow): Promise<void> {
  await trx.insertInto('virtual_accounts').values(row).execute();
}

export async function listVirtualAccounts(db: Db, customerId: string): Promise<VirtualAccountRow[]> {
  return db.selectFrom('virtual_accounts').selectAll().where('customer_id', '=', customerId).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
}

/** The customer's virtual accounts among these ids (another customer's ids find nothing). */
export async function virtualAccountsWithIds(db: Db, customerId: string, ids: readonly string[]): Promise<VirtualAccountRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('virtual_accounts').selectAll().where('customer_id', '=', customerId).where('id', 'in', [...new Set(ids)]).execute();
}

/** A page of the customer's virtual accounts, newest first, and how many there are (the dashboard's list). */
export async function pageOfVirtualAccounts(db: Db, customerId: string, offset: number, limit: number) {
  return newestFirstPage<VirtualAccountRow>(db.selectFrom('virtual_accounts').where('customer_id', '=', customerId), offset, limit);
}

/** Sets status and updated_at where the caller's virtual account still has status `from`; false when it no longer has. */
export async function transitionVirtualAccountStatus(
  trx: Transaction<Database>,
  customerId: string,
  id: string,
  from: string,
  changes: Pick<VirtualAccountsTable, 'status' | 'updated_at'>,
): Promise<boolean> {
  const result = await trx.updateTable('virtual_accounts').set(changes).where('customer_id', '=', customerId).where('id', '=', id).where('status', '=', from).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The caller's virtual account, or undefined — another customer's id is indistinguishable from an unknown one. */
export async function findVirtualAccount(db: Db, customerId: string, id: string): Promise<VirtualAccountRow | undefined> {
  return db.selectFrom('virtual_accounts').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}

/** The customer's virtual accounts in `currency` that money may leave (active, and their master too), oldest first. */
export async function activeVirtualAccountsIn(db: Kysely<Database>, customerId: string, currency: string) {
  return db
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
}

/** Whose virtual account its bank knows by `frVirtualAccountId` (the reference of its provider events), whoever's it is. */
export async function virtualAccountByReference(db: Db, frVirtualAccountId: string): Promise<{ id: string; customer_id: string } | undefined> {
  return db.selectFrom('virtual_accounts').select(['id', 'customer_id']).where('fr_virtual_account_id', '=', frVirtualAccountId).executeTakeFirst();
}
