import { createHash, randomUUID } from 'node:crypto';
import type { FileStore } from '../../storage/files.js';
import { providerId } from '../../providers/provider-ids.js';
import type { DocumentRow } from './repository.js';

export interface NewStoredDocument {
  customerId: string;
  endUserId: string;
  documentType: string;
  fileName: string;
  mimeType: string;
  bytes: Buffer;
  now: Date;
}

/**
 * Writes the file to the store first and returns the row to insert (in the caller's transaction). The row starts
 * `uploaded` / `pending`: the document sync worker hands it to the provider afterwards, with retries.
 */
export async function storeDocumentFile(files: FileStore, input: NewStoredDocument): Promise<DocumentRow> {
  const storagePath = await files.put(input.customerId, input.bytes);
  const now = input.now.toISOString();
  return {
    id: randomUUID(),
    customer_id: input.customerId,
    end_user_id: input.endUserId,
    document_type: input.documentType,
    file_name: input.fileName,
    mime_type: input.mimeType,
    size_bytes: BigInt(input.bytes.length),
    sha256: createHash('sha256').update(input.bytes).digest('hex'),
    storage_path: storagePath,
    fr_document_id: providerId('doc'),
    status: 'uploaded',
    fr_sync_status: 'pending',
    sync_attempts: 0,
    next_sync_at: now,
    last_sync_error: null,
    synced_at: null,
    created_at: now,
    updated_at: now,
  };
}
