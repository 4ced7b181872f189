import type { Kysely } from 'kysely';
import { queryTemplate } from '../../storage/query-template.js';
import type { ApiKeysTable, Database } from '../../storage/tables.js';

export type ApiKeyRow = ApiKeysTable;

export async function insertApiKey(db: Kysely<Database>, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

/** The key with its customer's provider id, in one round trip: this runs on every request, so it is compiled once. */
const apiKeyByHash = queryTemplate<{ keyHash: string }>()(['keyHash'], (db, { keyHash }) =>
  db
    .selectFrom('api_keys')
    .innerJoin('customers', 'customers.id', 'api_keys.customer_id')
    .selectAll('api_keys')
    .select('customers.fr_owner_business_id')
    .where('api_keys.key_hash', '=', keyHash),
);

export async function findApiKeyByHash(
  db: Kysely<Database>,
  keyHash: string,
): Promise<(ApiKeyRow & { fr_owner_business_id: string }) | undefined> {
  return apiKeyByHash.executeTakeFirst(db, { keyHash });
}

export async function listApiKeys(db: Kysely<Database>, customerId: string): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').selectAll().where('customer_id', '=', customerId).orderBy('created_at', 'asc').execute();
}

/** Sets revoked_at once; revoking again keeps the first time. */
export async function revokeApiKey(db: Kysely<Database>, id: string, revokedAt: string): Promise<ApiKeyRow | undefined> {
  await db.updateTable('api_keys').set({ revoked_at: revokedAt }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function touchApiKey(db: Kysely<Database>, id: string, usedAt: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: usedAt }).where('id', '=', id).execute();
}
