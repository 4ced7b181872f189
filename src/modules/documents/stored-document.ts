import { createHash } from 'node:crypto';
import type { CustomerTime } from '../../clock.js';
import { newId } from '../../ids.js';
import type { Kysely, Transaction } from 'kysely';
import { DomainError } from '../../errors.js';
import { providerId } from '../../providers/provider-ids.js';
import type { Database } from '../../storage/tables.js';
import { addStoredDocumentBytes, storedDocumentBytes } from '../customers/index.js';
import { insertDocument, type DocumentRow } from './repository.js';
import type { CheckedFile } from './upload.js';

export interface NewStoredDocument {
  customerId: string;
  endUserId: string;
  documentType: string;
  /** Uploads only; end-user reports have none. */
  documentKind?: string | undefined;
  file: CheckedFile;
  storagePath: string;
  now: Date;
  /** When the first sync attempt is due: now in the customer's time (a test clock's while one is attached, docs/test-clocks.md). */
  firstSync: CustomerTime;
}

/**
 * The row of a stored file. It starts `uploaded` / `pending`: the document sync worker hands it to the provider
 * afterwards, with retries.
 */
export function storedDocumentRow(input: NewStoredDocument): DocumentRow {
  const now = input.now.toISOString();
  return {
    id: newId(),
    customer_id: input.customerId,
    end_user_id: input.endUserId,
    document_type: input.documentType,
    document_kind: input.documentKind ?? null,
    file_name: input.file.fileName,
    mime_type: input.file.mimeType,
    size_bytes: BigInt(input.file.bytes.length),
    sha256: createHash('sha256').update(input.file.bytes).digest('hex'),
    storage_path: input.storagePath,
    fr_document_id: providerId('doc'),
    status: 'uploaded',
    fr_sync_status: 'pending',
    sync_attempts: 0,
    next_sync_at: input.firstSync.now.toISOString(),
    clock_id: input.firstSync.clockId,
    last_sync_error: null,
    synced_at: null,
    created_at: now,
    updated_at: now,
  };
}

const storageQuotaExceeded = (quotaBytes: number, storedBytes: bigint, addedBytes: number) =>
  new DomainError('STORAGE_QUOTA_EXCEEDED', `Your stored documents would exceed the quota of ${quotaBytes} bytes.`, {
    quota_bytes: quotaBytes,
    stored_bytes: Number(storedBytes),
    upload_bytes: addedBytes,
  });

/**
 * Inserts document rows and adds their bytes to the customer's stored total, only while the total stays within the
 * quota: one conditional update, so concurrent uploads cannot overshoot it together.
 */
export async function insertStoredDocuments(trx: Transaction<Database>, customerId: string, rows: DocumentRow[], quotaBytes: number): Promise<void> {
  if (rows.length === 0) return;
  const added = rows.reduce((sum, row) => sum + BigInt(row.size_bytes), 0n);
  if (!(await addStoredDocumentBytes(trx, customerId, added, BigInt(quotaBytes)))) {
    throw storageQuotaExceeded(quotaBytes, await storedDocumentBytes(trx, customerId), Number(added));
  }
  for (const row of rows) await insertDocument(trx, row);
}

/** Refuses an upload that would exceed the quota before any file is written (the insert checks again, exactly). */
export async function assertWithinStorageQuota(db: Kysely<Database>, customerId: string, addedBytes: number, quotaBytes: number): Promise<void> {
  const stored = await storedDocumentBytes(db, customerId);
  if (stored + BigInt(addedBytes) > BigInt(quotaBytes)) throw storageQuotaExceeded(quotaBytes, stored, addedBytes);
}
