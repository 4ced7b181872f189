import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { Clock } from '../../clock.js';
import {
  documentSyncAttemptsMax,
  documentSyncBackoffBaseMs,
  documentSyncBackoffMaxMs,
  documentSyncBatchSize,
  documentSyncCallTimeoutMs,
  documentSyncErrorLengthMax,
  documentSyncLeaseMs,
} from '../../config/limits.js';
import type { KycProvider } from '../../providers/kyc.js';
import type { Storage } from '../../storage/database.js';
import type { FileStore } from '../../storage/files.js';
import { claimDue } from '../../workers/claim.js';
import { withTimeout } from '../../workers/timeout.js';
import { updatePendingDocument, type DocumentRow, type DueDocument } from './repository.js';

/** Wait after failed attempt `attempt` (1-based): base · 2^(attempt−1), capped. */
export function documentSyncRetryDelayMs(attempt: number): number {
  return Math.min(documentSyncBackoffBaseMs * 2 ** (attempt - 1), documentSyncBackoffMaxMs);
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > documentSyncErrorLengthMax ? `${text.slice(0, documentSyncErrorLengthMax - 1)}…` : text;
}

/**
 * Hands stored documents (uploads and end-user reports) to the KYC provider. All state lives in the documents
 * row, so a restarted process resumes where the last one stopped:
 *
 * 1. claim (workers/claim.ts, the claim of every worker): sync_attempts + 1 and next_sync_at = now + lease, in
 *    one statement that hands each due document to exactly one instance;
 * 2. read the file and call the provider, outside any transaction;
 * 3. record `synced`, or `pending` again after the backoff with last_sync_error, or `failed` once
 *    documentSyncAttemptsMax attempts have failed — again only if nobody started a newer attempt meanwhile.
 *
 * An attempt cut short by a crash counts as an attempt; its document is retried when the lease runs out.
 */
export class DocumentSyncWorker {
  constructor(
    private readonly storage: Storage,
    private readonly kyc: KycProvider,
    private readonly files: FileStore,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** One pass over the due documents; returns how many it acted on. */
  async syncDue(): Promise<number> {
    const now = this.clock.now();
    const claimed = await claimDue<DocumentRow>(this.storage, {
      table: 'documents',
      due: sql`fr_sync_status = 'pending'`,
      leaseColumn: 'next_sync_at',
      now: now.toISOString(),
      leaseUntil: new Date(now.getTime() + documentSyncLeaseMs).toISOString(),
      orderBy: 'next_sync_at',
      limit: documentSyncBatchSize,
      set: { sync_attempts: sql`sync_attempts + 1`, updated_at: now.toISOString() },
    });
    if (claimed.length === 0) return 0;
    const endUsers = await this.storage.db
      .selectFrom('end_users')
      .select(['id', 'fr_end_user_id'])
      .where('id', 'in', [...new Set(claimed.map((document) => document.end_user_id))])
      .execute();
    const frEndUserIdOf = new Map(endUsers.map((row) => [row.id, row.fr_end_user_id]));
    for (const document of claimed) await this.syncOne({ ...document, fr_end_user_id: frEndUserIdOf.get(document.end_user_id) ?? '' });
    return claimed.length;
  }

  /** An attempt claimed (sync_attempts already counts it): send it, or give up if no attempts are left. */
  private async syncOne(document: DueDocument): Promise<void> {
    const attempt = Number(document.sync_attempts);
    if (attempt > documentSyncAttemptsMax) {
      // The last attempt was claimed but never reported back (its process stopped); no attempts are left.
      const now = this.clock.now().toISOString();
      await this.record(document, attempt, {
        fr_sync_status: 'failed',
        next_sync_at: null,
        sync_attempts: documentSyncAttemptsMax,
        last_sync_error: document.last_sync_error ?? `attempt ${documentSyncAttemptsMax} did not finish`,
        updated_at: now,
      });
      return;
    }

    const failure = await this.send(document, attempt);
    const now = this.clock.now();
    if (failure === undefined) {
      this.log.info({ documentId: document.id, attempt }, 'document synced to the provider');
      await this.record(document, attempt, { fr_sync_status: 'synced', next_sync_at: null, last_sync_error: null, synced_at: now.toISOString(), updated_at: now.toISOString() });
      return;
    }
    if (attempt >= documentSyncAttemptsMax) {
      this.log.warn({ documentId: document.id, attempt, reason: failure }, 'document sync failed for good');
      await this.record(document, attempt, { fr_sync_status: 'failed', next_sync_at: null, last_sync_error: failure, updated_at: now.toISOString() });
      return;
    }
    const retryAt = new Date(now.getTime() + documentSyncRetryDelayMs(attempt));
    this.log.warn({ documentId: document.id, attempt, reason: failure, retryAt: retryAt.toISOString() }, 'document sync attempt failed; retrying later');
    await this.record(document, attempt, { next_sync_at: retryAt.toISOString(), last_sync_error: failure, updated_at: now.toISOString() });
  }

  /** The provider call of one attempt; undefined on success, otherwise the reason to keep. */
  private async send(document: DueDocument, attempt: number): Promise<string | undefined> {
    let bytes: Buffer;
    try {
      bytes = await this.files.get(document.storage_path);
    } catch (error) {
      // The client sees a plain reason; the path and errno stay in the log.
      this.log.error({ err: error, documentId: document.id }, 'stored document file could not be read');
      return 'the stored file could not be read';
    }
    try {
      await withTimeout(
        this.kyc.uploadDocument({
          frDocumentId: document.fr_document_id,
          frEndUserId: document.fr_end_user_id,
          documentType: document.document_type,
          documentKind: document.document_kind,
          fileName: document.file_name,
          mimeType: document.mime_type,
          bytes,
          attempt,
        }),
        documentSyncCallTimeoutMs,
        'the provider',
      );
      return undefined;
    } catch (error) {
      return errorText(error);
    }
  }

  private async record(document: DueDocument, attempt: number, changes: Parameters<typeof updatePendingDocument>[3]): Promise<void> {
    const recorded = await updatePendingDocument(this.storage.db, document, attempt, changes);
    if (!recorded) {
      // Our lease ran out and another instance started a newer attempt; its outcome is the one that counts.
      this.log.warn({ documentId: document.id, attempt }, 'document sync outcome discarded: a newer attempt exists');
    }
  }
}
