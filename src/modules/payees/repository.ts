import type { Kysely, Transaction } from 'kysely';
import type { Dialect } from '../../storage/database.js';
import { newestFirstPage } from '../../storage/newest-first-page.js';
import type { Database, PayeesTable } from '../../storage/tables.js';
import { containsText } from '../../storage/text-search.js';

export type PayeeRow = PayeesTable;

export async function insertPayee(trx: Transaction<Database>, row: PayeeRow): Promise<void> {
  await trx.insertInto('payees').values(row).execute();
}

/** The caller's payees, oldest first; the id breaks ties between payees created in the same millisecond. */
export async function listPayees(db: Kysely<Database>, customerId: string): Promise<PayeeRow[]> {
  return db.selectFrom('payees').selectAll().where('customer_id', '=', customerId).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
}

/** What the dashboard's payee search asks for: one id, or words in a name or the bank details. */
export type PayeeSearch = { id: string } | { text: string } | Record<string, never>;

/**
 * A page of the customer's payees, newest first, that match the search, and how many match in all. Words are looked
 * for in the payee's and the account holder's names as typed, and in the bank numbers without the spaces and dashes
 * people write in them (`DE89 3704 0044`, `20-00-00`): IBANs and sort codes are stored without them.
 */
export async function pageOfPayees(db: Kysely<Database>, dialect: Dialect, customerId: string, search: PayeeSearch, offset: number, limit: number) {
  let query = db.selectFrom('payees').where('customer_id', '=', customerId);
  if ('id' in search) query = query.where('id', '=', search.id);
  if ('text' in search) {
    const bankNumber = search.text.replace(/[\s-]/g, '');
    query = query.where((eb) =>
      eb.or([
        ...(['payee_name', 'account_holder_name'] as const).map((column) => containsText(dialect, eb.ref(column), search.text)),
        ...(bankNumber === '' ? [] : (['iban', 'account_number', 'sort_code', 'routing_number'] as const).map((column) => containsText(dialect, eb.ref(column), bankNumber))),
      ]),
    );
  }
  return newestFirstPage<PayeeRow>(query, offset, limit);
}

/** Sets status and updated_at where the caller's payee still has status `from`; false when it no longer has. */
export async function transitionPayeeStatus(
  trx: Transaction<Database>,
  customerId: string,
  id: string,
  from: string,
  changes: Pick<PayeesTable, 'status' | 'updated_at'>,
): Promise<boolean> {
  const result = await trx.updateTable('payees').set(changes).where('customer_id', '=', customerId).where('id', '=', id).where('status', '=', from).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The caller's payee, or undefined — another customer's id is indistinguishable from an unknown one. */
export async function findPayee(db: Kysely<Database>, customerId: string, id: string): Promise<PayeeRow | undefined> {
  return db.selectFrom('payees').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}
