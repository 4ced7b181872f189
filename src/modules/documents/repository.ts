import type { Kysely, Transaction } from 'kysely';
import { clockRowsToRelease } from '../../storage/test-clock-rows.js';
import type { Database, DocumentsTable } from '../../storage/tables.js';

export type DocumentRow = DocumentsTable;

export async function insertDocument(trx: Transaction<Database> | Kysely<Database>, row: DocumentRow): Promise<void> {
  await trx.insertInto('documents').values(row).execute();
}

export async function findDocument(db: Kysely<Database>, customerId: string, id: string): Promise<DocumentRow | undefined> {
  return db.selectFrom('documents').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}

export async function listDocumentsOfEndUser(db: Kysely<Database>, customerId: string, endUserId: string): Promise<DocumentRow[]> {
  return db
    .selectFrom('documents')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('end_user_id', '=', endUserId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

/*
 * Provider sync (docs/documents.md). The worker serves every customer: it claims due documents across customers
 * (sync-worker.ts); each write here still names the row's customer, and is conditional on the attempt the worker
 * claimed, so two instances never both act on one attempt.
 */

export interface DueDocument extends DocumentRow {
  fr_end_user_id: string;
}

/** Changes a pending document only if nobody has started another attempt since `attemptsSeen` was read. */
/** A deleted test clock's documents keep their next sync time, read by the server clock from now on. */
export async function releaseClockDocuments(db: Kysely<Database>, clockId: string | null): Promise<void> {
  await db.updateTable('documents').set({ clock_id: null }).where(clockRowsToRelease('documents', clockId)).execute();
}

export async function updatePendingDocument(
  db: Kysely<Database>,
  row: Pick<DocumentRow, 'id' | 'customer_id'>,
  attemptsSeen: number,
  changes: Partial<Omit<DocumentRow, 'id' | 'customer_id'>>,
): Promise<boolean> {
  const result = await db
    .updateTable('documents')
    .set(changes)
    .where('customer_id', '=', row.customer_id)
    .where('id', '=', row.id)
    .where('fr_sync_status', '=', 'pending')
    .where('sync_attempts', '=', attemptsSeen)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}
