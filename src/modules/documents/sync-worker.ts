import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import { documentSyncAttemptsMax, documentSyncBackoffBaseMs, documentSyncBackoffMaxMs } from '../../config/limits.js';
import type { KycProvider } from '../../providers/kyc.js';
import type { Storage } from '../../storage/database.js';
import type { FileStore } from '../../storage/files.js';
import { withTimeout } from '../../workers/timeout.js';
import { dueDocuments, updatePendingDocument, type DueDocument } from './repository.js';

/** Documents claimed per pass; the polling worker runs the next pass at once while passes find work. */
export const documentSyncBatchSize = 20;
/** A provider call that has not answered by then counts as a failed attempt (the worker must not hang). */
export const documentSyncCallTimeoutMs = 60_000;
/**
 * How long a claimed attempt keeps its document away from other instances. Longer than the call timeout, so the
 * lease only runs out when the instance that claimed it stopped mid-attempt; the document is then due again.
 */
export const documentSyncLeaseMs = 5 * 60_000;
/** Provider error messages are kept for the client, cut to this length. */
export const documentSyncErrorLengthMax = 500;

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
 * 1. claim: sync_attempts + 1 and next_sync_at = now + lease, only if sync_attempts is still what was read —
 *    of two instances reading the same row, one wins and the other skips it;
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
    const due = await dueDocuments(this.storage.db, this.clock.now().toISOString(), documentSyncBatchSize);
    let acted = 0;
    for (const document of due) {
      if (await this.syncOne(document)) acted += 1;
    }
    return acted;
  }

  private async syncOne(document: DueDocument): Promise<boolean> {
    const attemptsSeen = Number(document.sync_attempts);
    const startedAt = this.clock.now();
    if (attemptsSeen >= documentSyncAttemptsMax) {
      // The last attempt was claimed but never reported back (the process stopped); no attempts are left.
      return updatePendingDocument(this.storage.db, document, attemptsSeen, {
        fr_sync_status: 'failed',
        next_sync_at: null,
        last_sync_error: document.last_sync_error ?? `attempt ${attemptsSeen} did not finish`,
        updated_at: startedAt.toISOString(),
      });
    }

    const attempt = attemptsSeen + 1;
    const claimed = await updatePendingDocument(this.storage.db, document, attemptsSeen, {
      sync_attempts: attempt,
      next_sync_at: new Date(startedAt.getTime() + documentSyncLeaseMs).toISOString(),
      updated_at: startedAt.toISOString(),
    });
    if (!claimed) return false;

    const failure = await this.send(document, attempt);
    const now = this.clock.now();
    if (failure === undefined) {
      this.log.info({ documentId: document.id, attempt }, 'document synced to the provider');
      return this.record(document, attempt, { fr_sync_status: 'synced', next_sync_at: null, last_sync_error: null, synced_at: now.toISOString(), updated_at: now.toISOString() });
    }
    if (attempt >= documentSyncAttemptsMax) {
      this.log.warn({ documentId: document.id, attempt, reason: failure }, 'document sync failed for good');
      return this.record(document, attempt, { fr_sync_status: 'failed', next_sync_at: null, last_sync_error: failure, updated_at: now.toISOString() });
    }
    const retryAt = new Date(now.getTime() + documentSyncRetryDelayMs(attempt));
    this.log.warn({ documentId: document.id, attempt, reason: failure, retryAt: retryAt.toISOString() }, 'document sync attempt failed; retrying later');
    return this.record(document, attempt, { next_sync_at: retryAt.toISOString(), last_sync_error: failure, updated_at: now.toISOString() });
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

  private async record(document: DueDocument, attempt: number, changes: Parameters<typeof updatePendingDocument>[3]): Promise<boolean> {
    const recorded = await updatePendingDocument(this.storage.db, document, attempt, changes);
    if (!recorded) {
      // Our lease ran out and another instance started a newer attempt; its outcome is the one that counts.
      this.log.warn({ documentId: document.id, attempt }, 'document sync outcome discarded: a newer attempt exists');
    }
    return true;
  }
}
