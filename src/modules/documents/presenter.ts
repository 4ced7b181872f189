import type { DocumentRow } from './repository.js';
import type { DocumentKind, DocumentRecord, DocumentUploadResultRecord } from './schemas.js';

/** docs/spec.md §2 leaves the wording of `message` open; it says what happens next. */
const uploadMessage = 'Document stored. It will be sent to the verification provider; read GET /documents/{id} for the sync status.';

export function presentUploadResult(row: DocumentRow): DocumentUploadResultRecord {
  return {
    id: row.id,
    storage_path: row.storage_path,
    fr_document_id: row.fr_document_id,
    status: row.status,
    fr_sync_status: row.fr_sync_status,
    message: uploadMessage,
  };
}

export function presentDocument(row: DocumentRow): DocumentRecord {
  return {
    id: row.id,
    end_user_id: row.end_user_id,
    document_type: row.document_type,
    document_kind: row.document_kind as DocumentKind | null,
    file_name: row.file_name,
    mime_type: row.mime_type,
    // SQLite hands integers back as bigint; both fit a JSON number with room to spare.
    size_bytes: Number(row.size_bytes),
    storage_path: row.storage_path,
    fr_document_id: row.fr_document_id,
    status: row.status,
    fr_sync_status: row.fr_sync_status,
    sync_attempts: Number(row.sync_attempts),
    next_sync_at: row.next_sync_at,
    last_sync_error: row.last_sync_error,
    synced_at: row.synced_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
