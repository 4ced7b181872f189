import { sql, type Kysely, type Transaction } from 'kysely';
import type { Storage } from '../../storage/database.js';
import { newestFirstPage } from '../../storage/newest-first-page.js';
import { queryTemplate } from '../../storage/query-template.js';
import type { Database } from '../../storage/tables.js';

const customerColumns = ['id', 'name', 'fr_owner_business_id', 'created_at'] as const;

export interface CustomerRow {
  id: string;
  name: string;
  fr_owner_business_id: string;
  created_at: string;
}

export async function insertCustomer(db: Kysely<Database>, row: CustomerRow): Promise<void> {
  await db.insertInto('customers').values(row).execute();
}

/** How the customer's hosted onboarding page presents it (migration 0029). */
export interface CustomerBranding {
  display_name: string | null;
  logo_url: string | null;
}

export async function findCustomerBranding(db: Kysely<Database>, id: string): Promise<CustomerBranding | undefined> {
  return db.selectFrom('customers').select(['display_name', 'logo_url']).where('id', '=', id).executeTakeFirst();
}

export async function updateCustomerBranding(db: Kysely<Database>, id: string, branding: CustomerBranding): Promise<void> {
  await db.updateTable('customers').set(branding).where('id', '=', id).execute();
}

export async function findCustomer(db: Kysely<Database>, id: string): Promise<CustomerRow | undefined> {
  return db.selectFrom('customers').select(customerColumns).where('id', '=', id).executeTakeFirst();
}

/** The first customer created with this exact name (names need not be unique). */
export async function findCustomerByName(db: Kysely<Database>, name: string): Promise<CustomerRow | undefined> {
  return db.selectFrom('customers').select(customerColumns).where('name', '=', name).orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
}

/** One page of all customers, newest first, with their number; only the columns of CustomerRow (not the counters). */
export async function listCustomers(db: Kysely<Database>, offset: number, limit: number): Promise<{ rows: CustomerRow[]; total: bigint }> {
  const { rows, total } = await newestFirstPage<CustomerRow>(db.selectFrom('customers'), offset, limit);
  return { rows: rows.map(({ id, name, fr_owner_business_id, created_at }) => ({ id, name, fr_owner_business_id, created_at })), total };
}

/** The bytes of the customer's stored documents (the counter the documents module keeps). */
export async function storedDocumentBytes(db: Kysely<Database> | Transaction<Database>, customerId: string): Promise<bigint> {
  const row = await db.selectFrom('customers').select('stored_document_bytes').where('id', '=', customerId).executeTakeFirstOrThrow();
  return BigInt(row.stored_document_bytes);
}

/**
 * Adds `addedBytes` to the customer's stored document bytes only while the total stays within `quotaBytes`: one
 * conditional update, so concurrent uploads cannot overshoot it together. False when it would have.
 */
export async function addStoredDocumentBytes(trx: Transaction<Database>, customerId: string, addedBytes: bigint, quotaBytes: bigint): Promise<boolean> {
  const counted = await trx
    .updateTable('customers')
    .set({ stored_document_bytes: sql`stored_document_bytes + ${addedBytes}` })
    .where('id', '=', customerId)
    .where(sql<boolean>`stored_document_bytes + ${addedBytes} <= ${quotaBytes}`)
    .executeTakeFirst();
  return counted.numUpdatedRows === 1n;
}

// Every history page reads it: compiled once (storage/query-template.ts).
const customerTransactionCount = queryTemplate<{ customerId: string }>()(['customerId'], (db, { customerId }) =>
  db.selectFrom('customers').select('transaction_count').where('id', '=', customerId),
);

/** How many statement lines the customer has (the counter the ledger keeps as it writes them; docs/ledger.md). */
export async function transactionCount(db: Kysely<Database> | Transaction<Database>, customerId: string): Promise<bigint> {
  const row = await customerTransactionCount.executeTakeFirst(db, { customerId });
  return row ? BigInt(row.transaction_count) : 0n;
}

/**
 * Serialises a customer's changes that count their rows on PostgreSQL (its customers row, locked until commit), so
 * ten concurrent creations cannot all count nine. SQLite runs one write transaction at a time anyway.
 */
export async function lockCustomer(trx: Transaction<Database>, storage: Storage, customerId: string): Promise<void> {
  if (storage.dialect === 'postgres') await sql`select id from customers where id = ${customerId} for update`.execute(trx);
}
