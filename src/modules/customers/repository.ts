import type { Kysely } from 'kysely';
import type { Database } from '../../storage/tables.js';

export interface CustomerRow {
  id: string;
  name: string;
  fr_owner_business_id: string;
  created_at: string;
}

export async function insertCustomer(db: Kysely<Database>, row: CustomerRow): Promise<void> {
  await db.insertInto('customers').values(row).execute();
}

export async function findCustomer(db: Kysely<Database>, id: string): Promise<CustomerRow | undefined> {
  return db.selectFrom('customers').select(['id', 'name', 'fr_owner_business_id', 'created_at']).where('id', '=', id).executeTakeFirst();
}
