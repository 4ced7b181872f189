import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import { queryTemplate } from '../../storage/query-template.js';
import { newestFirstPage } from '../../storage/newest-first-page.js';
import type { Database, FiatAccountsTable } from '../../storage/tables.js';

export type FiatAccountRow = Selectable<FiatAccountsTable>;

/** A fiat account with its customer's provider id, which its record carries. */
export type FiatAccountWithOwner = FiatAccountRow & { fr_owner_business_id: string };

// Every payment looks up its accounts (accounts/customer-accounts.ts): compiled once, one read with the customer.
const fiatAccountOfCustomer = queryTemplate<{ customerId: string; id: string }>()(['customerId', 'id'], (db, { customerId, id }) =>
  db
    .selectFrom('fiat_accounts')
    .innerJoin('customers', 'customers.id', 'fiat_accounts.customer_id')
    .selectAll('fiat_accounts')
    .select('customers.fr_owner_business_id')
    .where('fiat_accounts.customer_id', '=', customerId)
    .where('fiat_accounts.id', '=', id),
);

/** The caller's fiat account with its owner's provider id, or undefined (another customer's answers like an unknown one). */
export async function fiatAccountWithOwner(db: Kysely<Database>, customerId: string, id: string): Promise<FiatAccountWithOwner | undefined> {
  return fiatAccountOfCustomer.executeTakeFirst(db, { customerId, id });
}

export async function insertFiatAccount(trx: Transaction<Database>, row: Insertable<FiatAccountsTable>): Promise<void> {
  await trx.insertInto('fiat_accounts').values(row).execute();
}

export async function listFiatAccounts(db: Kysely<Database>, customerId: string): Promise<FiatAccountRow[]> {
  return db.selectFrom('fiat_accounts').selectAll().where('customer_id', '=', customerId).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
}

/** The customer's fiat accounts among these ids (another customer's ids find nothing). */
export async function fiatAccountsWithIds(db: Kysely<Database>, customerId: string, ids: readonly string[]): Promise<FiatAccountRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('fiat_accounts').selectAll().where('customer_id', '=', customerId).where('id', 'in', [...new Set(ids)]).execute();
}

/** A page of the customer's fiat accounts, newest first, and how many there are (the dashboard's list). */
export async function pageOfFiatAccounts(db: Kysely<Database>, customerId: string, offset: number, limit: number) {
  return newestFirstPage<FiatAccountRow>(db.selectFrom('fiat_accounts').where('customer_id', '=', customerId), offset, limit);
}

/** Sets status and updated_at where the caller's account still has status `from`; false when it no longer has. */
export async function transitionFiatAccountStatus(
  trx: Transaction<Database>,
  customerId: string,
  id: string,
  from: string,
  changes: Pick<FiatAccountsTable, 'status' | 'updated_at'>,
): Promise<boolean> {
  const result = await trx.updateTable('fiat_accounts').set(changes).where('customer_id', '=', customerId).where('id', '=', id).where('status', '=', from).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function findFiatAccount(db: Kysely<Database>, customerId: string, id: string): Promise<FiatAccountRow | undefined> {
  return db.selectFrom('fiat_accounts').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}

/** The customer's active fiat accounts in `currency` (money may leave them), oldest first, with what they may pay. */
export async function activeFiatAccountsIn(db: Kysely<Database>, customerId: string, currency: string) {
  return db
    .selectFrom('fiat_accounts')
    .select(['id', 'currency', 'is_master', 'account_name', 'balance_minor', 'allocated_minor'])
    .where('customer_id', '=', customerId)
    .where('currency', '=', currency)
    .where('status', '=', 'active')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Whose account its bank knows by `frAccountId` (the reference of its provider events), whoever's it is. */
export async function fiatAccountByReference(db: Kysely<Database>, frAccountId: string): Promise<{ id: string; customer_id: string } | undefined> {
  return db.selectFrom('fiat_accounts').select(['id', 'customer_id']).where('fr_account_id', '=', frAccountId).executeTakeFirst();
}
