import { sql, type Kysely, type Transaction } from 'kysely';
import type { Dialect } from '../../storage/database.js';
import { newestFirstPage } from '../../storage/newest-first-page.js';
import type { Database, EndUsersTable } from '../../storage/tables.js';
import { containsText } from '../../storage/text-search.js';

export type EndUserRow = EndUsersTable;
type Db = Kysely<Database> | Transaction<Database>;

export async function insertEndUser(trx: Db, row: EndUserRow): Promise<void> {
  await trx.insertInto('end_users').values(row).execute();
}

/** The caller's end user, or undefined — another customer's id is indistinguishable from an unknown one. */
export async function findEndUser(db: Db, customerId: string, id: string): Promise<EndUserRow | undefined> {
  return db.selectFrom('end_users').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}

/** The end user the KYC provider knows by `frEndUserId` (its reference in provider events), whoever's it is. */
export async function findEndUserByReference(db: Db, frEndUserId: string): Promise<EndUserRow | undefined> {
  return db.selectFrom('end_users').selectAll().where('fr_end_user_id', '=', frEndUserId).executeTakeFirst();
}

/** The provider's ids of these end users (any customer's: for a worker that already holds their rows' references). */
export async function providerEndUserIds(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('end_users').select(['id', 'fr_end_user_id']).where('id', 'in', [...new Set(ids)]).execute();
  return new Map(rows.map((row) => [row.id, row.fr_end_user_id]));
}

export async function listEndUsers(db: Db, customerId: string): Promise<EndUserRow[]> {
  return db.selectFrom('end_users').selectAll().where('customer_id', '=', customerId).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
}

/** What the dashboard's end-user search asks for: one id, or words in a name or the email address. */
export type EndUserSearch = { id: string } | { text: string } | Record<string, never>;

/** A page of the customer's end users, newest first, that match the search, and how many match in all. */
export async function pageOfEndUsers(db: Db, dialect: Dialect, customerId: string, search: EndUserSearch, offset: number, limit: number) {
  let query = db.selectFrom('end_users').where('customer_id', '=', customerId);
  if ('id' in search) query = query.where('id', '=', search.id);
  if ('text' in search) {
    // The name as the dashboard writes it (first, middle, last), so a name it suggests is found; and without the middle.
    const fullName = sql<string>`coalesce(first_name, '') || ' ' || coalesce(last_name, '')`;
    const fullNameWithMiddle = sql<string>`coalesce(first_name, '') || ' ' || coalesce(middle_name || ' ', '') || coalesce(last_name, '')`;
    const columns = ['first_name', 'last_name', 'company_name', 'email'] as const;
    query = query.where((eb) =>
      eb.or([...columns.map((column) => containsText(dialect, eb.ref(column), search.text)), containsText(dialect, fullName, search.text), containsText(dialect, fullNameWithMiddle, search.text)]),
    );
  }
  return newestFirstPage<EndUserRow>(query, offset, limit);
}

export async function updateEndUser(trx: Db, customerId: string, id: string, changes: Partial<EndUserRow>): Promise<void> {
  await trx.updateTable('end_users').set(changes).where('customer_id', '=', customerId).where('id', '=', id).execute();
}

/**
 * Moves the status only if it is still `from`; the caller learns whether it won, so two concurrent decisions
 * cannot both apply.
 */
export async function transitionEndUserStatus(
  trx: Db,
  id: string,
  from: string,
  changes: Pick<EndUserRow, 'status' | 'updated_at'> & Partial<EndUserRow>,
): Promise<boolean> {
  const result = await trx.updateTable('end_users').set(changes).where('id', '=', id).where('status', '=', from).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Sandbox decisions whose time has come, oldest first. */
