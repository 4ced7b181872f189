import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { Database, FiatAccountsTable } from '../../storage/tables.js';

export type FiatAccountRow = Selectable<FiatAccountsTable>;

export async function insertFiatAccount(trx: Transaction<Database>, row: Insertable<FiatAccountsTable>): Promise<void> {
  await trx.insertInto('fiat_accounts').values(row).execute();
}

export async function listFiatAccounts(db: Kysely<Database>, customerId: string): Promise<FiatAccountRow[]> {
  return db.selectFrom('fiat_accounts').selectAll().where('customer_id', '=', customerId).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
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
