import type { Kysely, Transaction } from 'kysely';
import type { Database, PayeesTable } from '../../storage/tables.js';

export type PayeeRow = PayeesTable;

export async function insertPayee(trx: Transaction<Database>, row: PayeeRow): Promise<void> {
  await trx.insertInto('payees').values(row).execute();
}

/** The caller's payees, oldest first; the id breaks ties between payees created in the same millisecond. */
export async function listPayees(db: Kysely<Database>, customerId: string): Promise<PayeeRow[]> {
  return db.selectFrom('payees').selectAll().where('customer_id', '=', customerId).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
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
